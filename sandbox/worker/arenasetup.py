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
from sandbox.worker.arena import CANDIDATE_REGIONS, GRAIN, REGIONS, Arena, DeviceArenaFailed


def wanted(device: str) -> bool:
    """``KH_DEVICE_ARENA``: unset or 1, on a GPU; 0, never; ``force``, also where it cannot be had
    (a CPU judgement: the reference refuses it and the fallback runs; tests/evaluator/test_devarena.py)."""
    mode = os.environ.get("KH_DEVICE_ARENA", "1")
    return mode == "force" or (device.startswith("cuda") and mode != "0")


def attach(ref: Any, cand: Any, device: str, ram: int, evidence: dict[str, Any], fits: bool = True) -> Arena:
    """Make the arena, presize it (host memory: to what the op used before, sandbox/worker/arenahint.py,
    at most a quarter of the workers' RAM; device memory: one granule a region), and hand it to
    the reference, then the candidate worker.
    ``fits``: the task's buffers fit in the GPU's memory (sandbox/intake/datasize.py
    ``device_arena_fits``); when they do not, the host arena, and evidence says so."""
    why = None
    fits = fits or os.environ.get("KH_DEVICE_ARENA") == "force"
    if wanted(device) and not fits:
        why = "the task's data and the judge's buffers do not fit in the GPU's memory together"
    elif wanted(device):
        # one granule per region, not the op's remembered sizes: a judgement waiting for the device
        # holds no device memory a running one may need (several judge each GPU at once); the
        # regions grow under the device lock when the first call needs them. The granules still
        # make, export and map each region now, so a device or jail that cannot falls back here.
        arena = Arena(device=True)
        for r in REGIONS:
            arena.ensure(r, GRAIN)
        evidence["arena_presized"] = {}
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


def evidence(arena: Arena, ref: Any, cand: Any) -> dict[str, Any]:
    """``verdict.evidence["arena"]``: the region sizes, whether they are device memory, per worker
    whether each host mapping is pinned, and which regions the candidate maps read-only."""
    ev: dict[str, Any] = {"sizes": dict(arena.sizes), "device": arena.device,
                          **{w.role: w.arena_info.get("pinned") for w in (ref, cand) if w is not None}}
    if cand is not None and "readonly" in cand.arena_info:
        ev["readonly"] = cand.arena_info["readonly"]
    return ev
