"""Which memory a judgement's arena lives in, and attaching it to both workers (sandbox/judge.py).

On a GPU the arena is device memory (sandbox/worker/devarena.py), made by the reference worker;
on a CPU, with ``KH_DEVICE_ARENA=0``, or where device memory cannot be made, exported or mapped,
it is host memfds made by the parent outside the jails (then evidence ``arena_device_fallback``
says why). Either way the candidate never gets ``ref_in``, and no candidate code has run yet.
"""

from __future__ import annotations

import os
from typing import Any

from sandbox.worker import arenahint
from sandbox.worker.arena import CANDIDATE_REGIONS, REGIONS, Arena, DeviceArenaFailed


def wanted(device: str) -> bool:
    return device.startswith("cuda") and os.environ.get("KH_DEVICE_ARENA", "1") != "0"


def attach(ref: Any, cand: Any, device: str, ram: int, evidence: dict[str, Any], fits: bool = True) -> Arena:
    """Make the arena, presize it to what the op used before (sandbox/worker/arenahint.py; at most
    a quarter of the workers' RAM), and hand it to the reference, then the candidate worker.
    ``fits``: the task's buffers fit in the GPU's memory (sandbox/intake/datasize.py
    ``device_arena_fits``); when they do not, the host arena, and evidence says so."""
    why = None
    if wanted(device) and not fits:
        why = "the task's data and the judge's buffers do not fit in the GPU's memory together"
    elif wanted(device):
        arena = Arena(device=True)
        evidence["arena_presized"] = arenahint.presize(arena, ref.persist, ram // 4)
        try:
            ref.attach_arena(arena, REGIONS)
            cand.attach_arena(arena, CANDIDATE_REGIONS)
            return arena
        except DeviceArenaFailed as e:
            why = str(e)
            arena.close()
    arena = Arena()
    evidence["arena_presized"] = arenahint.presize(arena, ref.persist, ram // 4)
    if why is not None:
        evidence["arena_device_fallback"] = why[:500]
    ref.attach_arena(arena, REGIONS)
    cand.attach_arena(arena, CANDIDATE_REGIONS)
    return arena
