"""Judgements in flight on a GPU, counted across the harness processes of one machine.

An executor runs ``judges_per_device`` judgements per GPU at once (harness/executors/local.py):
one holds the device (devicelock.py), the others start their workers (Python, torch, a CUDA
context: CPU-bound, at nice 0) beside it. That number is chosen for one process. Several
``harness run`` processes on one machine (the user's scale: one per method and seed, issue 27
goal 6) each started as many, so a GPU had four times the start-ups beside the judgement holding
it; that judgement's own host-side work (inputs, comparisons, the timing loop) slowed with them
(four H200s, session 18: a relu held its GPU 3.4 s in the scale run, 1.2 s alone).

A slot is an ``flock`` on one of ``limit`` files named after the GPU, beside its device lock:
a judging thread takes one before it starts a judgement and gives it back when the judgement
ends, so the machine as a whole has at most ``limit`` judgements in flight per GPU. The kernel
drops a slot when its holder dies. ``KH_MACHINE_SLOTS=0`` turns the count off (each process
counts only its own).

**Weighted takes.** ``take(..., weight=n)`` waits for ``n`` slots of a set. The judge uses it
for its share of the GPU's memory (sandbox/lane/gpumem.py: its own set of files beside these,
taken from the arena on); the executor's judging slots weigh one each. Several slots are taken all
at once or not at all, so no one waits while holding some; one that has waited ``GROW_AFTER_S``
takes the set's single *grower* lock and then keeps the slots it gets until it has its weight;
while there is a grower, single takes wait (only the grower holds while it waits: no deadlock, and
a heavy judgement is not starved by light ones that would retake each slot freed).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable

from sandbox.lane.devicelock import file_for

POLL_S = 0.1  # how often a thread without a slot looks again
GROW_AFTER_S = 2.0  # a weighted take waits this long all-or-nothing, then as the grower


def enabled() -> bool:
    return os.environ.get("KH_MACHINE_SLOTS", "1").strip() not in ("0", "false", "no", "off")


def base_for(device: str) -> str | None:
    """The slot files' common prefix for ``device``: beside its machine-wide device lock; None for
    a CPU device (CPU judgements are not counted across processes) or when the count is off."""
    path = file_for(device) if enabled() else None
    return None if path is None else path[: -len(".lock")] + ".slot"


class Slot:
    def __init__(self, fd: int, index: int) -> None:
        self.fd, self.index = fd, index

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # drops the flock
            self.fd = -1


def _flock(path: str) -> int | None:
    """An exclusive ``flock`` on ``path`` without waiting: its fd, or None when another holds it.
    OSError when the file cannot be opened."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)  # flock needs no write access
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def try_take(base: str, limit: int) -> Slot | None:
    """A free slot among ``base``0 .. ``base``(limit-1), or None when every one is held. OSError
    when a slot file cannot be opened (the caller then counts nothing)."""
    for k in range(max(1, limit)):
        fd = _flock(f"{base}{k}")
        if fd is not None:
            return Slot(fd, k)
    return None


class Slots:
    """The slots one judgement holds (its weight): released together."""

    def __init__(self, held: list[Slot]) -> None:
        self.held = held

    def release(self) -> None:
        for s in self.held:
            s.release()
        self.held = []


def _take_more(base: str, limit: int, held: list[Slot], n: int) -> None:
    """Add free slots to ``held`` (those it already holds are skipped) until it has ``n``."""
    mine = {s.index for s in held}
    for k in range(max(1, limit)):
        if len(held) >= n:
            return
        if k in mine:
            continue
        fd = _flock(f"{base}{k}")
        if fd is not None:
            held.append(Slot(fd, k))


def take(base: str, limit: Callable[[], int], give_up: Callable[[], bool],
         weight: int = 1) -> tuple[Slots | None, float]:
    """Wait for ``weight`` slots (``limit()`` read at each look: it may grow meanwhile; a weight
    over it is cut to it). Returns (the slots, seconds waited); (None, waited) once ``give_up()``
    is true."""
    t = time.monotonic()
    held: list[Slot] = []
    grower: int | None = None
    try:
        while True:
            lim = limit()
            n = min(max(1, weight), max(1, lim))
            if grower is None and (n > 1 or not _growing(base)):  # a grower waits: single takes let it have
                _take_more(base, lim, held, n)  # what frees up (else they retake it at once)
                if len(held) < n:  # all or nothing: hold none while waiting
                    for s in held:
                        s.release()
                    held = []
                    if n > 1 and time.monotonic() - t >= GROW_AFTER_S:
                        grower = _try_grower(base)
            if grower is not None:
                _take_more(base, lim, held, n)
            if len(held) >= n:
                got, held = Slots(held), []
                return got, time.monotonic() - t
            if give_up():
                return None, time.monotonic() - t
            time.sleep(POLL_S)
    finally:
        for s in held:
            s.release()
        if grower is not None:
            os.close(grower)


def _growing(base: str) -> bool:
    """Whether another take is the grower now (its lock is held)."""
    fd = _try_grower(base)
    if fd is None:
        return True
    os.close(fd)
    return False


def _try_grower(base: str) -> int | None:
    return _flock(f"{base}grow")


def weight_for(need_bytes: int | None, gpu_bytes: int | None, limit: int) -> int:
    """How many of ``limit`` slots a judgement needing ``need_bytes`` of a GPU of ``gpu_bytes``
    takes: its share of the memory, rounded up, at least 1 and at most ``limit``. 1 when either
    size is unknown."""
    if not need_bytes or not gpu_bytes or limit <= 1:
        return 1
    share = gpu_bytes / limit
    return max(1, min(limit, -(-int(need_bytes) // int(share))))
