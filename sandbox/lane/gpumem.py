"""A judgement's share of its GPU's memory, reserved from its arena on, across the machine.

Judgements in flight together on one GPU must fit its memory: on an H200 six judgements of
KernelBench level-1 tasks with 8-16 GiB inputs filled its 140 GiB and two honest ones were judged
``rejected sandbox.resources`` when the harness's own poison step could not allocate (2026-11-28).

Session 29 weighed the executor's judging slots (sandbox/lane/slots.py) by memory. A slot is
held for the judgement's whole life, and the first ~10-15 s of it (both workers' Python, torch
and CUDA start-up, the compile baseline's imports) hold almost no GPU memory. On two H200s with
80 published KernelBench kernels, heavy tasks then waited for slots that were held by start-ups
(median wait 8-19 s, longest 142 s), and each GPU was busy 0.30-0.48 of the run (2026-11-28,
session 30).

So the memory has its own reservation, taken by the judge (sandbox/judge.py) where the memory is
first taken, just before the arena is made and mapped (its biggest single allocation), and given
back when the judgement ends (after the attribution's reference run, if any). The executor's slot
counts judgements in flight again (one each), which bounds the start-ups crowding the GPU's
holder. The reservation is ``UNITS`` flock files per GPU, beside its slot files; a judgement takes
``ceil(need / (GPU memory / UNITS))`` of them (``slots.weight_for``), all at once or as the single
grower (``slots.take``). No judgement that holds a reservation waits for another one (the
judgement's warm-apart worker shares its reservation), so the waits cannot form a cycle.
``KH_MACHINE_SLOTS=0`` turns it off with the slots.
"""

from __future__ import annotations

import threading
from typing import Any

from sandbox.lane import slots

UNITS = 12  # an H200's 140 GiB in units of about 11.7 GiB
# the share of the GPU's memory the units divide: the rest is left to what no estimate counts (each
# process's CUDA context, cuBLAS and cuDNN workspaces, the allocator's rounding). With the units over
# the whole GPU, honest judgements still ran it out of memory in the harness's own poison step
# (session 32, calls 1 and 3: L2Norm's 8 GiB poison block with 502 MiB free)
USABLE = 0.9
_alone = threading.local()


class alone:
    """``with alone():`` the judgements this thread reserves memory for take every unit: none other
    runs beside them on that GPU (the local executor's second judgement of a candidate that ran the
    GPU out of memory beside others: harness/executors/local.py)."""

    def __enter__(self) -> alone:
        _alone.on = True
        return self

    def __exit__(self, *exc: object) -> None:
        _alone.on = False


def base_for(device: str) -> str | None:
    """The reservation files' common prefix for ``device``; None off a GPU or when counting is off."""
    base = slots.base_for(device)
    return None if base is None else base + "mem"


class GpuMemory:
    """One judgement's reservation, shared by its Judges (the warm-apart worker's and the judging
    pair's): taken once, by the first to need it; released by ``release`` at the judgement's end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: slots.Slots | None = None
        self.evidence: dict[str, Any] = {}

    def reserve(self, device: str, need_bytes: int | None) -> float:
        """Wait for this judgement's share of ``device``'s memory (no-op when already reserved, off a
        GPU or with counting off). Returns the seconds waited: not the candidate's time."""
        with self._lock:
            if self._held is not None or self.evidence:
                return 0.0
            base = base_for(device)
            if base is None:
                self.evidence = {"units": None}
                return 0.0
            from sandbox.intake.datasize import gpu_memory_bytes

            gpu = gpu_memory_bytes()
            by_itself = bool(getattr(_alone, "on", False))
            units = UNITS if by_itself else slots.weight_for(need_bytes, int(gpu * USABLE) if gpu else gpu, UNITS)
            try:
                got, waited = slots.take(base, lambda: UNITS, lambda: False, weight=units)
            except OSError as e:  # the files cannot be made here: judged without a reservation
                self.evidence = {"units": None, "error": str(e)[:200]}
                return 0.0
            self._held = got
            self.evidence = {"units": units, "of": UNITS, "wait_s": round(waited, 3),
                             "need_gib": None if need_bytes is None else round(need_bytes / 2**30, 1),
                             "gpu_gib": None if not gpu else round(gpu / 2**30, 1), **({"alone": True} if by_itself else {})}
            return waited

    def release(self) -> None:
        with self._lock:
            if self._held is not None:
                self._held.release()
                self._held = None
