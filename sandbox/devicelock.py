"""One judgement at a time on each device, within one harness process.

A judgement holds its device's lock from the moment its two workers are up (before the
candidate is imported: import-time code may already use the GPU) until both workers are gone,
so no other candidate's code, reference or timing runs on that device meanwhile. What is left
outside the lock is only trusted work that launches no GPU kernel: starting the workers
(Python, torch, the CUDA context, allocations, the profiler's set-up). The warm-up's kernels
run after the lock is taken (``warm_device``): a kernel from another process's context would
time-slice the GPU under the current judgement's timed calls. An executor with two judging
threads per device therefore overlaps the next judgement's start-up with the current one's
checks and timing, and timings stay exclusive.

CPU judgements take the ``cpu`` lock for the same reason: host timers measure the same cores.
"""

from __future__ import annotations

import heapq
import itertools
import threading

JUDGING, WARM_APART = 0, 1  # who waits: a judgement's judging pair goes before a warm-apart worker


class DeviceLock:
    """A lock granted by priority: the lowest ``(rank, ticket)`` among the waiters gets the
    device when it is released. A judgement's ticket is taken when it starts, so the oldest
    judgement in flight goes first, and a judging pair (``JUDGING``) before any warm-apart worker
    (``WARM_APART``, sandbox/buildphase.py): a verdict is finished before more work is started.
    With a plain lock, six judging threads per GPU let up to six warm-apart workers hold the GPU
    in turn before any judgement that was ready went on (H100, session 11: the first verdict of a
    fresh batch at 58 s, judgements waiting 17-22 s)."""

    def __init__(self) -> None:
        self._cv = threading.Condition(threading.Lock())
        self._held = False
        self._waiting: list[tuple[int, int, int]] = []  # (rank, ticket, unique)
        self._unique = itertools.count()

    def acquire(self, rank: int = JUDGING, ticket: int | None = None) -> bool:
        me = (rank, next(_TICKETS) if ticket is None else ticket, next(self._unique))
        with self._cv:
            heapq.heappush(self._waiting, me)
            try:
                while self._held or self._waiting[0] != me:
                    self._cv.wait()
            except BaseException:  # interrupted while waiting: out of the line, the next one goes
                self._waiting.remove(me)
                heapq.heapify(self._waiting)
                self._cv.notify_all()
                raise
            heapq.heappop(self._waiting)
            self._held = True
        return True

    def release(self) -> None:
        with self._cv:
            if not self._held:
                raise RuntimeError("release of a device lock that is not held")
            self._held = False
            self._cv.notify_all()

    def locked(self) -> bool:
        return self._held

    def __enter__(self) -> DeviceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_LOCKS: dict[str, DeviceLock] = {}
_GUARD = threading.Lock()
_TICKETS = itertools.count()


def ticket() -> int:
    """A judgement's place in line, taken when it starts (sandbox/judge.py)."""
    return next(_TICKETS)


def key(device: str) -> str:
    """'cuda' and 'cuda:0' are the same device; every CPU device is 'cpu'."""
    if device.startswith("cuda"):
        return device if ":" in device else "cuda:0"
    return "cpu"


def device_lock(device: str) -> DeviceLock:
    with _GUARD:
        return _LOCKS.setdefault(key(device), DeviceLock())
