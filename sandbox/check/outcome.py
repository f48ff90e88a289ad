"""What ended a judgement before its verdict was decided, written into that verdict.

``sandbox/judgement.py``'s ``judge()`` runs the phases; the first of these exceptions ends them:

* ``Reject``: a check refused the candidate (status, rule and message from the check, its
  evidence, and its log with the errors first);
* ``ProtocolViolation``: the candidate's worker broke the result channel (``result_channel``);
* ``WorkerDied``: the candidate's process died, ran past its wall limit or a call's bound, or was
  killed for a resource limit; or the reference worker died, which is not taken at its word;
* ``ReferenceFailed`` / ``DeviceArenaFailed``: the reference side failed. These return the
  failure's text; once the candidate's workers are gone the reference runs alone
  (``sandbox/check/attribution.py``) to say who is to blame.
"""

from __future__ import annotations

from typing import Any

from sandbox import rules
from sandbox.check.calls import ReferenceFailed, Reject
from sandbox.verdict import Status
from sandbox.worker.judgeenv import _errors_first
from sandbox.worker.session import CallTimeout, DeviceArenaFailed, ProtocolViolation, WorkerDied

ENDINGS = (Reject, ProtocolViolation, ReferenceFailed, DeviceArenaFailed, WorkerDied)


def record(j: Any, e: BaseException) -> str | None:
    """Write what ``e`` says into ``j.v`` (a ``Judge``); return the reference's failure, if it was one."""
    if isinstance(e, Reject):
        j.v.status, j.v.rule, j.v.message = e.status, e.rule, e.message
        log = e.evidence.pop("log", "")
        j.v.evidence.update(e.evidence)
        if log:
            j.v.logs = _errors_first(log)
    elif isinstance(e, ProtocolViolation):
        j.v.status, j.v.rule, j.v.message = Status.REJECTED, rules.RESULT_CHANNEL, str(e)
    elif isinstance(e, ReferenceFailed):
        return str(e)
    elif isinstance(e, DeviceArenaFailed):  # a region grown mid-judgement (the candidate may hold the memory)
        return f"{j.task.path}: the reference worker could not grow the arena in device memory: {e}"
    elif isinstance(e, WorkerDied):
        if j.ref is not None and "reference" in str(e) and not e.timed_out:
            return f"{j.task.path}: the reference worker died: {e}\n{j.ref.log_tail()[-2000:]}"
        _candidate_died(j, e)
    else:
        raise TypeError(f"not a judgement's ending: {e!r}")
    return None


def _candidate_died(j: Any, e: WorkerDied) -> None:
    w = j.cand
    violation = w.handle.violation() if w is not None else None
    tail = w.log_tail() if w is not None else ""
    if violation:
        j.v.status, j.v.rule, j.v.message = Status.REJECTED, rules.RESOURCES, f"resource limit: {violation}"
    elif isinstance(e, CallTimeout):
        j.v.status, j.v.rule, j.v.message = Status.TIMEOUT, rules.TIMEOUT, f"{e}; the worker was killed"
    elif e.timed_out:
        j.v.status, j.v.rule = Status.TIMEOUT, rules.TIMEOUT
        j.v.message = f"the evaluation exceeded its {j.cfg.timeout_s:g} s wall limit; the worker group was killed"
    else:
        j.v.status, j.v.message = Status.RUNTIME_ERROR, f"the candidate's process died: {e}"
    j.v.logs = _errors_first(tail)
