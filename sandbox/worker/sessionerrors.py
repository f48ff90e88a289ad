"""What a worker session raises (sandbox/worker/session.py, sandbox/worker/arenalink.py)."""

from __future__ import annotations


class ProtocolViolation(RuntimeError):
    """The worker sent something the parent did not ask for (sandbox.result_channel)."""


class WorkerDied(RuntimeError):
    """The worker exited or stopped answering; ``timed_out`` tells which."""

    def __init__(self, msg: str, timed_out: bool = False) -> None:
        super().__init__(msg)
        self.timed_out = timed_out


class CallTimeout(WorkerDied):
    """One request ran past its own deadline (a per-call bound, or the judgement's bound on
    holding the GPU): the message names the request, the bound and the time spent."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg, timed_out=True)
