"""Which memory a judgement's arena lives in, and attaching it to both workers (sandbox/judge.py).

On a GPU the arena is device memory (sandbox/worker/devarena.py), made by the reference worker;
on a CPU, with ``KH_DEVICE_ARENA=0``, or where device memory cannot be made, exported or mapped,
it is host memfds made by the parent outside the jails (then evidence ``arena_device_fallback``
says why). Either way the candidate never gets ``ref_in``, and no candidate code has run yet.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

from sandbox.worker import arenahint
from sandbox.worker.arena import CANDIDATE_REGIONS, GRAIN, REGIONS, Arena, DeviceArenaFailed

PRESIZE_SHARE = 16  # a waiting judgement's device regions: at most this share of the GPU's memory


def wanted(device: str) -> bool:
    """``KH_DEVICE_ARENA``: unset or 1, on a GPU; 0, never; ``force``, also where it cannot be had
    (a CPU judgement: the reference refuses it and the fallback runs; tests/evaluator/test_devarena.py)."""
    mode = os.environ.get("KH_DEVICE_ARENA", "1")
    return mode == "force" or (device.startswith("cuda") and mode != "0")


def presize_budget() -> int:
    """Bytes of device memory a judgement's regions may take before it holds the GPU:
    ``KH_DEVICE_ARENA_PRESIZE_MIB``, else the GPU's memory / ``PRESIZE_SHARE`` (8.8 GB on an H200,
    5 GB on an 80 GB H100; 4 GiB where nvidia-smi does not answer). Six to eight judgements wait
    for each GPU; together they then hold at most half of it."""
    env = os.environ.get("KH_DEVICE_ARENA_PRESIZE_MIB")
    if env is not None:
        try:
            return max(0, int(env)) << 20
        except ValueError:
            raise ValueError(f"KH_DEVICE_ARENA_PRESIZE_MIB={env!r}: a whole number of MiB (0: never presize)") from None
    return _gpu_bytes() // PRESIZE_SHARE


@functools.cache
def _gpu_bytes() -> int:
    from sandbox.intake.datasize import gpu_memory_bytes

    return gpu_memory_bytes() or PRESIZE_SHARE * 4 * 2**30


def device_sizes(entry: str | None, sizes: Sequence[Any]) -> tuple[dict[str, int], str]:
    """The device regions' sizes for a judgement before it holds the GPU, and where they come
    from: the op's remembered sizes (arenahint.py) when there are some, else the task's data-size
    estimate at the profiles it judges (sandbox/intake/datasize.py ``DataSize``: the inputs and
    1 MiB for their alignment in both input regions, twice the output and 1 MiB in ``out``, as the
    output bound grows it), else none."""
    got = arenahint.read(entry)
    if got:
        return got, "remembered"
    if not sizes:
        return {}, "none"
    inputs = max(s.inputs for s in sizes)  # one region a call: the largest profile's
    outputs = max(s.outputs or 0 for s in sizes)
    est = {"ref_in": inputs + 2**20, "cand_in": inputs + 2**20, "out": 2 * outputs + 2**20 if outputs else 0}
    return {r: n for r, n in est.items() if n > 0}, "estimate"


def _presize_device(arena: Arena, entry: str | None, sizes: Sequence[Any]) -> dict[str, Any]:
    """Grow the device regions to their sizes before the lock when together they fit the budget
    (``presize_budget``); otherwise one granule each, grown under the lock as the calls need."""
    want, source = device_sizes(entry, sizes)
    budget = presize_budget()
    total = sum(-(-n // GRAIN) * GRAIN for n in want.values())
    if want and total <= budget:
        for r, n in want.items():
            arena.ensure(r, n)
        return {**{r: arena.sizes[r] for r in want}, "from": source}
    return {"from": source, "skipped": f"{total} bytes over the budget of {budget}"} if want else {}


def attach(ref: Any, cand: Any, device: str, ram: int, evidence: dict[str, Any], fits: bool = True,
           sizes: Sequence[Any] = ()) -> Arena:
    """Make the arena, presize it, and hand it to the reference, then the candidate worker.
    Host memory: to what the op used before (sandbox/worker/arenahint.py), each region at most a
    quarter of the workers' RAM. Device memory: to the op's remembered sizes or the estimate from
    ``sizes`` (the task's ``DataSize`` at each profile judged) when they fit ``presize_budget``, so
    the regions are made, exported and mapped before the lock and not while the GPU is held.
    On a machine whose GPUs judge at once those driver calls wait behind each other's: the
    driver serializes them across GPUs (docs/performance.md, session 28). Else one granule a region.
    ``fits``: the task's buffers fit in the GPU's memory (sandbox/intake/datasize.py
    ``device_arena_fits``); when they do not, the host arena, and evidence says so."""
    why = None
    fits = fits or os.environ.get("KH_DEVICE_ARENA") == "force"
    if wanted(device) and not fits:
        why = "the task's data and the judge's buffers do not fit in the GPU's memory together"
    elif wanted(device):
        # at least one granule per region, so a device or jail that cannot make, export and map
        # one falls back here; the full sizes only within the budget: a judgement waiting for the
        # device holds little memory a running one may need (several judge each GPU at once)
        arena = Arena(device=True)
        for r in REGIONS:
            arena.ensure(r, GRAIN)
        evidence["arena_presized"] = _presize_device(arena, ref.persist, sizes)
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
