"""The arena's sizes, remembered per op: the next judgement of the op maps them before it waits
for the device.

The parent grows a region when the trusted reference worker needs more room (a bigger profile's
inputs) or when a check needs a bigger output bound; both workers then map the region again, and
on CUDA pin it (``cudaHostRegister``), while the device is held. For an op with a 2 GiB output
that was 2.4 s of the 8.8 s hold (``triton_huge_outer_add``, H100: the 4.3 GB output region in
both workers). The sizes depend on the task alone (its profiles; never on the candidate), so
the parent keeps the largest it has used beside the op's reference cache entry
(sandbox/check/refcache.py) and makes the next judgement's regions that big when it starts its
workers, before the lock. The output bound stays per call: the parent checks it
(sandbox/check/calls.py), and the reference worker reads no output past it (``read_outputs``).
"""

from __future__ import annotations

import json
import os
import secrets
from typing import Any

from sandbox.worker.arena import REGIONS, Arena


def _path(entry: str) -> str:
    return entry.rstrip("/") + ".arena.json"


def read(entry: str | None) -> dict[str, int]:
    """The sizes remembered for the op (positive ints, known regions only); {} when there is no
    record or it cannot be read."""
    if entry is None:
        return {}
    try:
        with open(_path(entry)) as f:
            sizes = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(sizes, dict):
        return {}
    return {r: n for r in REGIONS if type(n := sizes.get(r)) is int and n > 0}


def presize(arena: Arena, entry: str | None, cap: int) -> dict[str, int]:
    """Grow ``arena``'s regions to the sizes remembered for the op (each at most ``cap`` bytes);
    returns what it applied. A missing or unreadable record applies nothing."""
    done: dict[str, int] = {}
    for r, n in read(entry).items():
        if n <= cap and arena.ensure(r, n):
            done[r] = arena.sizes[r]
    return done


def remember(arena: Arena, entry: str | None) -> None:
    """Keep the largest size of each region used so far for the op (atomically replaced)."""
    if entry is None:
        return
    path = _path(entry)
    old: Any = {}
    try:
        with open(path) as f:
            old = json.load(f)
    except (OSError, ValueError):
        pass
    old = old if isinstance(old, dict) else {}
    new = {r: max(int(old.get(r) or 0) if type(old.get(r)) is int else 0, arena.sizes[r]) for r in REGIONS}
    if new == old:
        return
    tmp = f"{path}.kh-tmp-{secrets.token_hex(4)}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w") as f:
            json.dump(new, f)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
