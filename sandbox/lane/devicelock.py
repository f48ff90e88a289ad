"""One judgement at a time on each device: within one harness process, and for a GPU also
across the processes of this machine.

A judgement holds its device's lock from its warm-up (the candidate's import runs before, sealed
where it can be: sandbox/build/buildphase.py) until both workers are gone, so no other candidate's
warm-up, reference or timing runs on that device meanwhile. What is left outside the lock is
trusted work that launches no GPU kernel (starting the workers: Python, torch, the CUDA context,
allocations, the profiler's set-up), the import and, on a GPU, the warm-up's first models (their
constructors and the copy of their weights to the device: sandbox/modelsetup.py, ``presetup``). The
warm-up's kernels run after the lock is taken (``warm_device``): a kernel from another process's
context would time-slice the GPU under the current judgement's timed calls. An executor with two
judging threads per device therefore overlaps the next judgement's start-up with the current one's
checks and timing, and timings stay exclusive.

A warm-up that holds the device for the lane allowance while another judgement waits gives it to
the waiters and queues behind them (``yield_to_waiters``, rank ``YIELDED``; sandbox/lane/firstcall.py),
its candidate stopped meanwhile; ``parked`` counts such judgements for the executors' lanes.

CPU judgements take the ``cpu`` lock for the same reason: host timers measure the same cores.

A GPU's lock is also an ``flock`` on a file named after the GPU as the driver knows it (its
``CUDA_VISIBLE_DEVICES`` entry), so two harness processes on one machine (two ``harness eval``
runs, or Ray's judge tasks, which are separate processes sharing a GPU) never time on it at the
same time. The kernel drops it when the holder dies.
"""

from __future__ import annotations

import fcntl
import heapq
import itertools
import os
import re
import tempfile
import threading
import time

JUDGING, WARM_APART = 0, 1  # who waits: a judgement's judging pair goes before a warm-apart worker
# before both: a task check's draws (sandbox/intake/taskcheck.py), a fraction of a second a task on a GPU,
# while every judgement of that task waits for its answer
TASK_CHECK = -1
YIELDED = 2  # a judgement whose slow first call gave the device up (sandbox/lane/firstcall.py): after the others


class DeviceLock:
    """A lock granted by priority: the lowest ``(rank, ticket)`` among the waiters gets the
    device when it is released. A judgement's ticket is taken when it starts, so the oldest
    judgement in flight goes first, and a judging pair (``JUDGING``) before any warm-apart worker
    (``WARM_APART``, sandbox/build/buildphase.py): a verdict is finished before more work is started.
    With a plain lock, six judging threads per GPU let up to six warm-apart workers hold the GPU
    in turn before any judgement that was ready went on (H100, session 11: the first verdict of a
    fresh batch at 58 s, judgements waiting 17-22 s)."""

    def __init__(self, device: str = "cpu") -> None:
        self._cv = threading.Condition(threading.Lock())
        self._held = False
        self._device, self._fd = device, -1  # a GPU's machine-wide lock (file_for), while held
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
        # then the other processes' judgements on this GPU; named at each acquisition: a Ray
        # worker process runs tasks on different GPUs in turn (CUDA_VISIBLE_DEVICES per task)
        path = file_for(self._device)
        if path is not None:
            fd = -1
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                if fd >= 0:
                    os.close(fd)
                self.release()
                raise
            self._fd = fd
        return True

    def release(self) -> None:
        with self._cv:
            if not self._held:
                raise RuntimeError("release of a device lock that is not held")
            if self._fd >= 0:
                os.close(self._fd)  # drops the flock
                self._fd = -1
            self._held = False
            self._cv.notify_all()

    def locked(self) -> bool:
        return self._held

    def waiting(self) -> int:
        """How many acquisitions of this process wait for the device now."""
        with self._cv:
            return len(self._waiting)

    def yield_to_waiters(self) -> float:
        """Give the device to the judgements waiting for it and wait for it again, behind them
        (rank ``YIELDED``, a new ticket: the back of the line); the caller holds it and has
        stopped its candidate meanwhile (sandbox/lane/firstcall.py). Returns the seconds it was
        without the device. Counted in ``parked`` meanwhile (the executor's lanes,
        harness/executors/local.py)."""
        t = time.monotonic()
        self.release()
        _park(self._device, +1)
        try:
            self.acquire(YIELDED, ticket())
        finally:
            _park(self._device, -1)
        return time.monotonic() - t

    def __enter__(self) -> DeviceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_LOCKS: dict[str, DeviceLock] = {}
_GUARD = threading.Lock()
_TICKETS = itertools.count()
_PARKED: dict[str, int] = {}  # device key -> judgements waiting to take their device back


def _park(device: str, n: int) -> None:
    with _GUARD:
        _PARKED[key(device)] = _PARKED.get(key(device), 0) + n


def parked(device: str) -> int:
    """Judgements of this process that gave ``device`` up during a slow first call and wait to
    take it back: they hold no device, so an executor may start other judgements beside them."""
    with _GUARD:
        return _PARKED.get(key(device), 0)


def ticket() -> int:
    """A judgement's place in line, taken when it starts (sandbox/judge.py)."""
    return next(_TICKETS)


def key(device: str) -> str:
    """'cuda' and 'cuda:0' are the same device; every CPU device is 'cpu'."""
    if device.startswith("cuda"):
        return device if ":" in device else "cuda:0"
    return "cpu"


def visible_entry(index: int, env: dict[str, str] | os._Environ[str]) -> str | None:
    """The ``index``-th entry of ``env``'s CUDA_VISIBLE_DEVICES (an id or a UUID: the GPU as the
    driver knows it); None when it is unset or has no such entry."""
    seen = [x.strip() for x in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if x.strip()]
    return seen[index] if index < len(seen) else None


def file_for(device: str) -> str | None:
    """The machine-wide lock file of a GPU: named after its entry in this process's
    CUDA_VISIBLE_DEVICES (the index when unset), in KH_DEVICE_LOCK_DIR or the temp dir."""
    k = key(device)
    if not k.startswith("cuda"):
        return None
    index = int(k.split(":", 1)[1])
    name = visible_entry(index, os.environ) or str(index)
    top = os.environ.get("KH_DEVICE_LOCK_DIR") or os.path.join(tempfile.gettempdir(), "kh-device-locks")
    os.makedirs(top, mode=0o777, exist_ok=True)
    return os.path.join(top, "gpu-" + re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".lock")


def device_lock(device: str) -> DeviceLock:
    with _GUARD:
        k = key(device)
        if k not in _LOCKS:
            _LOCKS[k] = DeviceLock(k)
        return _LOCKS[k]
