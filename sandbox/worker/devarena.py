"""The arena's regions in GPU memory: a call's inputs and outputs never cross the host (issue 27, goal 1).

On a GPU judgement the regions of sandbox/worker/arena.py are device memory
(sandbox/worker/devmem.py) instead of host memfds:

* the **reference worker** (trusted) makes every region (``own``): ``ref_in``, its own call inputs,
  never leaves it; ``cand_in`` and ``out`` are exported as file descriptors that go to the parent
  after the reply (``_fds``, SCM_RIGHTS) and from it to the candidate worker. A region the parent
  grew is made again, bigger, its bytes copied over, and exported again.
* the **candidate worker** maps what the parent hands it (``adopt``): ``cand_in`` read-only
  (``PROT_READ``; where the driver refuses that, read-write, and the reply says so) and ``out``
  read-write.

So the reference's inputs are generated on the device, written into ``cand_in`` device to device
(then the reference synchronizes: the candidate reads them from another process), copied into the
candidate's blank tensors device to device inside ``go`` (what made a timed call of a large-tensor
op slow: a host-to-device copy of its inputs each time), and the candidate's output goes device to
device into ``out``, where the reference reads it into private memory and compares it on the device.
Only headers and verdict-sized numbers cross to the parent.

What does not change: the reference's pristine inputs (``staged``) stay private to it and the
inputs-unchanged check compares ``cand_in`` with them; the candidate's tree is stopped while the
reference reads ``out`` and ``cand_in``; the output bound; the parent relays every header.
Any failure to make, export or map device memory is answered ``kind: device_arena`` before any
candidate code runs, and the judgement falls back to the host arena (evidence ``arena.device``).
"""

from __future__ import annotations

import os
from typing import Any

from sandbox.worker import devmem
from sandbox.worker.arena import CANDIDATE_REGIONS, REGIONS


def request(mapping: Any, role: str, cuda: bool, device: str, req: dict[str, Any], names: list[str],
            fds: list[int]) -> dict[str, Any]:
    """The worker's ``arena {device: true, ...}`` request (sandbox/worker/main.py ``arena_map``):
    the reference makes the regions, the candidate maps the ones handed to it."""
    if not cuda:
        for fd in fds:
            os.close(fd)
        return {"ok": False, "kind": "device_arena", "error": "a device arena on a CPU worker"}
    if role == "reference":
        return own(mapping, device, req.get("sizes", {}), list(req.get("export", [])))
    return adopt(mapping, device, names, fds, req.get("sizes", {}))


def _device_mode(mapping: Any) -> None:
    """Switch ``mapping`` to device memory (dropping any host regions) the first time."""
    if not mapping.device_mode:
        mapping.reset()
        mapping.device_mode = True


def _index(torch: Any, device: str) -> int:
    d = torch.device(device)
    return d.index if d.index is not None else torch.cuda.current_device()


def own(mapping: Any, device: str, sizes: dict[str, Any], export: list[str]) -> dict[str, Any]:
    """Reference worker: (re)make each region whose size changed; the reply carries the exported
    fds under ``_fds`` (sent after it by the worker's loop) and their names under ``fds``."""
    torch = mapping.torch
    _device_mode(mapping)
    idx = _index(torch, device)
    why = devmem.supported(idx)
    if why:
        return {"ok": False, "kind": "device_arena", "error": why}
    names: list[str] = []
    fds: list[int] = []
    try:
        torch.cuda.synchronize()  # nothing queued on a region about to be replaced
        for n, size in sizes.items():
            size = int(size)
            if n not in REGIONS or size <= 0 or size == mapping.sizes.get(n, 0):
                continue
            block = devmem.Block(size, idx)
            u8 = block.tensor(torch)[:size]
            old = mapping.u8.get(n)
            if old is not None:
                k = min(old.numel(), size)
                u8[:k].copy_(old[:k])
            mapping.u8[n], mapping.sizes[n], mapping.pinned[n] = u8, size, False
            if n in export and n in CANDIDATE_REGIONS:
                names.append(n)
                fds.append(block.export())
        torch.cuda.synchronize()
    except devmem.DeviceMemError as e:
        for fd in fds:
            os.close(fd)
        return {"ok": False, "kind": "device_arena", "error": str(e)}
    return {"ok": True, "device": True, "sizes": dict(mapping.sizes), "pinned": dict(mapping.pinned),
            "fds": names, "_fds": fds}


def adopt(mapping: Any, device: str, names: list[str], fds: list[int], sizes: dict[str, Any]) -> dict[str, Any]:
    """Candidate worker: map the regions the parent handed over (closing the fds)."""
    torch = mapping.torch
    _device_mode(mapping)
    idx = _index(torch, device)
    readonly = mapping.readonly
    try:
        for n, fd in zip(names, fds, strict=True):
            if n not in CANDIDATE_REGIONS:
                raise devmem.DeviceMemError(f"region {n!r} is not the candidate's")
            size = int(sizes[n])
            block = None
            if n == "cand_in":
                try:
                    block = devmem.Block(size, idx, fd=fd, prot=devmem.PROT_READ)
                except devmem.DeviceMemError:
                    block = None
            readonly[n] = block is not None
            if block is None:
                block = devmem.Block(size, idx, fd=fd, prot=devmem.PROT_READWRITE)
            mapping.u8[n], mapping.sizes[n], mapping.pinned[n] = block.tensor(torch)[:size], size, False
    except (devmem.DeviceMemError, KeyError, ValueError) as e:
        return {"ok": False, "kind": "device_arena", "error": str(e)}
    finally:
        for fd in fds:
            os.close(fd)
    return {"ok": True, "device": True, "sizes": dict(mapping.sizes), "pinned": dict(mapping.pinned),
            "readonly": dict(readonly)}
