"""Public entry point of the evaluator: judge one candidate against one task.

    verdict = evaluate(task, candidate_source, EvalConfig(mode=Mode.FINAL, device="cuda"))

Everything else in ``sandbox/`` serves this call: it starts the isolated judging processes,
collects their raw results over a private channel, and computes the verdict *outside* the
candidate's process. Contract (see docs/evaluator.md):

* never raises for a bad *candidate* (compile errors, crashes, hangs, cheats become statuses);
* raises ``CandidateError`` for unusable *input* (does not parse, no ``ModelNew``, signature
  mismatch): that is a user error, never recorded as a kernel verdict;
* raises ``taskcheck.DegenerateTask`` (a ``TaskError``) for a task the check ``task.degenerate``
  found degenerate on this machine, unless ``config.allow_degenerate`` (sandbox/intake/taskcheck.py);
* thread-safe: several evaluations may run at once (each in its own processes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandbox.config import EvalConfig
from sandbox.errors import CandidateError
from sandbox.verdict import Verdict

if TYPE_CHECKING:
    from pathlib import Path

    from sandbox.intake.task import Task

__all__ = ["CandidateError", "EvalConfig", "evaluate", "prepare_trusted"]


def evaluate(task: Task | str | Path, source: str, config: EvalConfig | None = None) -> Verdict:
    """Judge ``source`` (a ModelNew candidate) against ``task`` (a Task or a task file path).

    Returns a Verdict for anything the candidate does; raises CandidateError for unusable
    candidate input and sandbox.intake.task.TaskError for a broken reference.
    """
    from sandbox.intake import taskcheck
    from sandbox.intake.task import Task, load_task
    from sandbox.judgement import judge

    if not isinstance(task, Task):
        task = load_task(task)
    config = config or EvalConfig()
    checked = taskcheck.known(task, config)  # DegenerateTask (a TaskError) for a task known degenerate
    v = judge(task, source, config)
    taskcheck.record(v, checked, config)
    return v


def prepare_trusted(config: EvalConfig) -> None:
    """Build the trusted helpers a judgement under ``config`` loads, once per cache root: the op
    counter (sandbox/rules/opcount.py) and, on a GPU, the one-kernel compare
    (sandbox/check/fusedcompare.py). ``judge`` builds them itself before its clock starts; an
    executor calls this as it starts, beside a batch's task check and builds, so that its first
    judgement does not wait for them (11 s for the op counter on a loaded 2-core box)."""
    from sandbox.build import buildcache
    from sandbox.check import fusedcompare
    from sandbox.rules import opcount
    from sandbox.worker.judgeenv import cache_root

    trusted = buildcache.layout(cache_root(config), "")[2]
    opcount.ensure(trusted)
    if fusedcompare.wanted(config.device):
        fusedcompare.ensure(trusted)
