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
ends, so the machine as a whole has at most ``limit`` judgements in flight per GPU (one process
alone is never held back: it has ``limit`` threads at most). The kernel drops a slot when its
holder dies. ``KH_MACHINE_SLOTS=0`` turns the count off (each process counts only its own).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable

from sandbox.lane.devicelock import file_for

POLL_S = 0.1  # how often a thread without a slot looks again


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


def try_take(base: str, limit: int) -> Slot | None:
    """A free slot among ``base``0 .. ``base``(limit-1), or None when every one is held. OSError
    when a slot file cannot be opened (the caller then counts nothing)."""
    for k in range(max(1, limit)):
        fd = os.open(f"{base}{k}", os.O_RDONLY | os.O_CREAT, 0o666)  # flock needs no write access
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return Slot(fd, k)
    return None


def take(base: str, limit: Callable[[], int], give_up: Callable[[], bool]) -> tuple[Slot | None, float]:
    """Wait for a slot (``limit()`` read at each look: it may grow meanwhile). Returns (the slot,
    seconds waited); (None, waited) once ``give_up()`` is true."""
    t = time.monotonic()
    while True:
        slot = try_take(base, limit())
        if slot is not None or give_up():
            return slot, time.monotonic() - t
        time.sleep(POLL_S)
