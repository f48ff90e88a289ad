"""The op suite: tasks (``task.py``), resolving suite/op/path names to tasks (``suites.py``),
and self-checks of reference ops (``checks.py``, imports torch)."""

from harness.suite.suites import SuiteError, find_task, load_suites, op_paths, resolve
from sandbox.contract import OpMeta, Task, TaskError, load_task

__all__ = [
    "OpMeta",
    "SuiteError",
    "Task",
    "TaskError",
    "find_task",
    "load_suites",
    "load_task",
    "op_paths",
    "resolve",
]
