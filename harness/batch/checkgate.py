"""eval-batch's task check beside the judging: a task's candidates are judged once its own check
passed, not once every task's has.

The check (sandbox/intake/taskcheck.py) redraws each reference's inputs and weights in a reference
worker, about 2.4 s a KernelBench task on an H200: a batch of 63 tasks held every judgement back
for 203 s (session 30), though its first candidates' own task was checked in the first seconds.
Here the check runs in a thread of its own while the local executor builds (``hold_judging``). As
each task passes, its gate opens (``LocalExecutor.open_judging(gate)``) and its candidates are
judged and their rows written; when the check ends, every gate opens. A refusal (the check's
``SystemExit``, exit 2, after its one line) ends the batch: no candidate of the refused task is
judged or written, and rows already written are of tasks that passed (a later run with the same
folder keeps them). A verdict that needs no judging (a compile error found by a build worker) is
written only once its task passed, so nothing of a refused task is written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

# before_judging(on_pass): the check; calls on_pass(task, config) as each task passes, raises to refuse
BeforeJudging = Callable[[Callable[[Any, Any], None]], Any]


class CheckGate:
    """``before_judging`` run in a thread, opening ``executor``'s gates task by task."""

    def __init__(self, before_judging: BeforeJudging, executor: Any) -> None:
        self._before = before_judging
        self._ex = executor
        self.error: BaseException | None = None  # what the check raised (a refusal's SystemExit)
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._run, name="kh-task-check", daemon=True)

    def start(self) -> CheckGate:
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            self._before(lambda task, config: self._ex.open_judging(self._ex.gate(task, config)))
        except BaseException as e:  # noqa: BLE001 - raised again in the batch's own thread
            self.error = e
        else:
            self._ex.open_judging()  # every gate: a task the check did not name is not held forever
        finally:
            self.ended.set()

    def lets(self, task: Any, config: Any) -> bool:
        """May a verdict of this task be written now: the executor judges its task (it passed, or
        the whole check did)."""
        return self._ex.opened(task, config)

    def raise_if_refused(self) -> None:
        if self.error is not None:
            raise self.error
