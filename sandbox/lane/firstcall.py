"""A judgement's warm-up (the candidate's ``setup`` and first call at each profile): one budget
for the first calls, and the device given up while they are slow and another judgement waits.

**One budget.** A judgement's first calls, at every profile, in every worker and order that
makes them (the warm-apart worker, the sealed judging worker, the late order's), spend one
budget of ``EvalConfig.first_call_timeout_s`` seconds (90 s): each first call's bound is what is
left of it. Past it: ``timeout sandbox.timeout``, the message naming the budget. Time the
judgement spends parked (below) is not spent.

**The lane.** A first call runs while its judgement holds the device (sandbox/lane/devicelock.py:
nothing else may run on it then). While it runs, every ``session.WAIT_SLICE_S`` the parent looks
whether another judgement waits for the device; once the first call (or setup) has held it for
the lane allowance (``KH_LANE_ALLOWANCE_S``, 5 s) in one stretch while someone waits, the
judgement gives the device up:

* the candidate's whole process tree is stopped (SIGSTOP, ``isolation/proctree.stop_tree``; a
  container is paused), so it runs nowhere while another judgement holds the device;
* on a GPU the judgement's reference worker then checks that the GPU is quiet (a stopped process
  may have left a kernel running: ``gpuquiet``); when it is not, stopping is not enough, and the
  judgement's workers are killed instead (``LaneYield``): the caller starts them again later,
  behind the others, and the first calls start over within what is left of the budget;
* the device goes to the waiting judgements, and this one waits for it again behind them
  (``DeviceLock.yield_to_waiters``, rank ``YIELDED``); then the tree is continued and the call
  goes on where it was. Its deadlines move by the time it was parked.

So a slow warm-up delays another judgement's verdict by at most the allowance plus the time to
stop it, and a hang in a first call costs its own judgement's budget, not the machine's time.
Evidence ``first_calls``: the budget, the seconds spent, the allowance and each time the device
was given up (held, parked, how).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sandbox.config import EvalConfig
    from sandbox.lane.devicelock import DeviceLock
    from sandbox.worker.session import WorkerSession


class Judging(Protocol):
    """What the warm-up's budget uses of the judgement in progress (sandbox/judge.py's ``Judge`` has
    it): its workers, the device's lock while held, and the bound on holding it."""

    cfg: EvalConfig
    ref: WorkerSession | None
    cand: WorkerSession | None
    hold_until: float | None
    _lock: DeviceLock | None
    _held_since: float


DEFAULT_ALLOWANCE_S = 5.0


class LaneYield(Exception):
    """A first call was slow while another judgement waited, and its GPU work could not be
    stopped: the judgement's workers must go and start again, behind the others."""


def allowance_s() -> float:
    try:
        return max(0.5, float(os.environ.get("KH_LANE_ALLOWANCE_S") or DEFAULT_ALLOWANCE_S))
    except ValueError:
        return DEFAULT_ALLOWANCE_S


class FirstCalls:
    """One judgement's warm-up budget and the record of its lane (shared by the judgement and
    its warm-apart worker)."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = float(budget_s)
        self.spent_s = 0.0
        self.allowance_s = allowance_s()
        self.yields: list[dict[str, Any]] = []
        self.restarts = 0
        self.parked_s = 0.0  # parked during the request in flight (watch)
        self._stretch_from = 0.0  # when the current stretch of holding the device began

    def bound(self) -> tuple[float, str]:
        left = max(0.0, self.budget_s - self.spent_s)
        why = (f"the judgement's {self.budget_s:g} s for its first calls (every profile and order, JIT and "
               f"autotune included; {self.spent_s:.1f} s spent before this one)")
        return time.monotonic() + left, why

    def evidence(self) -> dict[str, Any]:
        return {"budget_s": self.budget_s, "spent_s": round(self.spent_s, 3), "allowance_s": self.allowance_s,
                "yields": self.yields, **({"restarts": self.restarts} if self.restarts else {})}

    # -- a request of the warm-up -----------------------------------------------------------
    @contextlib.contextmanager
    def watch(self, j: Judging, spend: bool) -> Iterator[None]:
        """Around a request of the warm-up to ``j``'s candidate worker: give the device up while
        it is slow (module docstring); ``spend``: a first call, whose time (less the time parked)
        is taken from the budget. ``parked_s`` is then the time it was parked."""
        w = j.cand
        self.parked_s = 0.0
        self._stretch_from = time.monotonic()
        w.on_wait = lambda: self._maybe_yield(j)
        t = time.monotonic()
        try:
            yield
        finally:
            w.on_wait = None
            if spend:
                self.spent_s += max(0.0, time.monotonic() - t - self.parked_s)

    def _maybe_yield(self, j: Judging) -> float:
        lock = j._lock
        now = time.monotonic()
        if lock is None or now - self._stretch_from < self.allowance_s or not lock.waiting():
            return 0.0
        held = now - self._stretch_from
        token = j.cand.freeze()
        if _must_restart(j):
            j.cand.thaw(token)  # about to be killed: stopped or not, its kernel runs until the context goes
            self.yields.append({"held_s": round(held, 3), "how": "restarted (its GPU work could not be stopped)"})
            self.restarts += 1
            raise LaneYield(f"a first call held the device {held:.1f} s while another judgement waited")
        try:
            parked = lock.yield_to_waiters()
        except BaseException:
            j._lock = None  # interrupted while waiting: the device is not held
            j.cand.thaw(token)
            raise
        j.cand.thaw(token)
        j._held_since += parked  # its exclusive time is the time it held the device
        for d in (j, j.ref, j.cand):
            if d is not None:
                d.deadline += parked
        if j.hold_until is not None:
            j.hold_until += parked
        self.parked_s += parked
        self._stretch_from = time.monotonic()
        self.yields.append({"held_s": round(held, 3), "parked_s": round(parked, 3), "how": "stopped"})
        return parked


def _must_restart(j: Judging) -> bool:
    """Stopping the candidate is not enough: on a GPU whose work it left running (a test forces it
    on CPU, to run the restart's path)."""
    return j.cfg.device.startswith("cuda") and not _gpu_quiet(j)


def _gpu_quiet(j: Judging) -> bool:
    """Whether the GPU runs nothing of the stopped candidate's (its reference worker, trusted and
    idle, times a short kernel: sandbox/lane/gpuquiet.py). Any failure answers no."""
    try:
        rep, _ = j.ref.request("gpu_quiet", bound=(time.monotonic() + 10.0, "10 s for the GPU-quiet probe"))
        return bool(rep.get("ok")) and bool(rep.get("quiet"))
    except Exception:  # noqa: BLE001 - then the candidate's workers are killed instead
        return False
