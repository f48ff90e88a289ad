"""Shared memory between the parent and the two judging workers: a call's inputs and outputs.

The parent (unjailed) makes one ``memfd`` per region with ``memfd_create`` (the judging
workers' seccomp filter refuses it), sizes it with ``ftruncate`` and hands the fds to the
workers over their channel with SCM_RIGHTS (``sandbox/worker/session.py``); a worker maps each region
(``Mapping``), and remaps when the parent says a region grew. Regions:

* ``ref_in``: the reference worker's own call inputs (its eager/compile calls read them from
  here, so both roles take the same path per call). The candidate never gets this fd.
* ``cand_in``: the inputs of the candidate's next call, written by the reference worker
  (``stage``). The candidate worker copies them into its blank tensors inside ``go``.
* ``out``: the candidate's output, written by its worker's ``fetch`` and read by the
  reference worker's ``check``. Its size is the output bound (2x the reference's outputs):
  an output that does not fit is ``rejected correctness.output_type``.

Layout of a region: tensors' raw bytes, each at a 64-byte aligned offset, described by a
header that travels through the parent as JSON (never read back from shared memory):
``{"dtype", "shape", "offset"}`` (plus ``"stride"`` and ``"base"`` for inputs) or
``{"type": Name}`` (an output that is not a plain tensor) or ``{"value": x}`` (a non-tensor
input). dtypes come from a fixed table (sandbox/worker/tensorfmt.py). An output header comes from the
untrusted candidate process: ``read_outputs`` checks everything in it against the region.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

from sandbox.worker.tensorfmt import ALIGN, MAX_DIMS, Malformed, _dtypes, _not_plain, _pad

REGIONS = ("ref_in", "cand_in", "out")
CANDIDATE_REGIONS = ("cand_in", "out")
GRAIN = 1 << 21  # regions grow in 2 MiB steps
MAX_ENTRIES = 64


class Arena:
    """The parent's side: one memfd per region, grown (never shrunk) as sizes become known.

    ``device=True`` (a GPU judgement, sandbox/worker/devarena.py): the regions are device memory
    the reference worker makes and exports; the parent only keeps their sizes and the exported
    fds of ``cand_in`` and ``out`` (``adopt``), each with a generation the candidate's session
    compares to know when to map a region again. ``owner``: the reference's session."""

    def __init__(self, device: bool = False) -> None:
        self.device = device
        self.fds: dict[str, int] = {} if device else {
            r: os.memfd_create(f"kh-arena-{r}", os.MFD_CLOEXEC) for r in REGIONS}
        self.sizes = dict.fromkeys(REGIONS, 0)
        self.gen = dict.fromkeys(REGIONS, 0)
        self.owner: Any = None

    def ensure(self, region: str, nbytes: int) -> bool:
        """Make ``region`` at least ``nbytes`` long; True when it grew (workers must remap)."""
        if nbytes <= self.sizes[region]:
            return False
        size = -(-nbytes // GRAIN) * GRAIN
        if not self.device:
            os.ftruncate(self.fds[region], size)
        self.sizes[region] = size
        return True

    def adopt(self, names: list[str], fds: list[int]) -> None:
        """Device arena: the fds the reference worker exported for ``names`` (re)made."""
        for n, fd in zip(names, fds, strict=True):
            old = self.fds.pop(n, None)
            if old is not None:
                os.close(old)
            self.fds[n] = fd
            self.gen[n] += 1

    def total(self, regions: tuple[str, ...]) -> int:
        """Host bytes the regions take in a worker that maps them (none for device memory)."""
        return 0 if self.device else sum(self.sizes[r] for r in regions)

    def close(self) -> None:
        for fd in self.fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = {}


class Mapping:
    """A worker's side: its regions mapped, as uint8 tensors over host memory (pinned with
    ``cudaHostRegister`` on CUDA when that works, pageable otherwise)."""

    def __init__(self, torch: Any, cuda: bool) -> None:
        self.torch, self.cuda = torch, cuda
        self.fds: dict[str, int] = {}
        self.sizes: dict[str, int] = {}
        self.u8: dict[str, Any] = {}  # region -> uint8 tensor over the whole mapping
        self.pinned: dict[str, bool] = {}
        self._maps: dict[str, Any] = {}
        self.device_mode = False  # regions in device memory (sandbox/worker/devarena.py)
        self.readonly: dict[str, bool] = {}  # device mode, candidate: which regions it maps read-only

    def reset(self) -> None:
        """Drop every region (a switch between host and device memory)."""
        for n in list(self.u8):
            self._drop(n)
        for fd in self.fds.values():
            os.close(fd)
        self.fds, self.sizes, self.u8, self.readonly = {}, {}, {}, {}

    def adopt(self, names: list[str], fds: list[int]) -> None:
        if self.device_mode:  # the judgement fell back to host memory
            self.reset()
            self.device_mode = False
        for n, fd in zip(names, fds, strict=True):
            if n in self.fds or n not in REGIONS:
                os.close(fd)
                raise ValueError(f"arena region {n!r} given twice or unknown")
            self.fds[n] = fd

    def remap(self, sizes: dict[str, int]) -> dict[str, Any]:
        t = self.torch
        for n, size in sizes.items():
            size = int(size)
            if n not in self.fds or size == self.sizes.get(n, 0):
                continue
            self._drop(n)
            if size > 0:
                m = mmap.mmap(self.fds[n], size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
                u8 = t.frombuffer(m, dtype=t.uint8)
                self._maps[n], self.u8[n] = m, u8
                self.pinned[n] = self._pin(u8)
            self.sizes[n] = size
        return {"sizes": dict(self.sizes), "pinned": dict(self.pinned)}

    def _pin(self, u8: Any) -> bool:
        if not self.cuda:
            return False
        try:
            return int(self.torch.cuda.cudart().cudaHostRegister(u8.data_ptr(), u8.numel(), 0)) == 0
        except Exception:  # noqa: BLE001 - pageable then (recorded in the verdict's evidence)
            return False

    def _drop(self, n: str) -> None:
        u8 = self.u8.pop(n, None)
        if u8 is not None and self.pinned.pop(n, False):
            try:
                self.torch.cuda.cudart().cudaHostUnregister(u8.data_ptr())
            except Exception:  # noqa: BLE001
                pass
        m = self._maps.pop(n, None)
        del u8
        if m is not None:
            try:
                m.close()
            except BufferError:  # a view still lives: unmapped when the last one goes
                pass

    def region(self, n: str) -> Any:
        u8 = self.u8.get(n)
        if u8 is None:
            raise ArenaTooSmall(n, 1)
        return u8


class DeviceArenaFailed(RuntimeError):
    """The arena could not be made, exported or mapped in device memory (sandbox/worker/devarena.py):
    at a judgement's start the host arena is used instead (sandbox/worker/arenasetup.py)."""


class ArenaTooSmall(Exception):
    def __init__(self, region: str, need: int) -> None:
        super().__init__(f"arena region {region} needs {need} bytes")
        self.region, self.need = region, need


# -- inputs (written by the reference worker: trusted) ------------------------------------------

def _nbytes(shape: list[int], dt: Any) -> int:
    n = 1
    for d in shape:
        n *= d
    return n * dt.itemsize


def stage_inputs(torch: Any, inputs: list[Any], u8: Any | None, region: str) -> list[dict[str, Any]]:
    """Write ``inputs`` into the region ``u8`` (None: not mapped yet); return the header.
    An expanded view (stride 0 over a dimension of size > 1) is written as its base, and
    rebuilt with ``expand``. Raises ArenaTooSmall (nothing written), TypeError for an input
    that cannot travel."""
    entries: list[dict[str, Any]] = []
    bases: list[Any] = []
    known = _dtypes(torch)
    off = 0
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            if not _jsonable(x):
                raise TypeError(f"input {i} is a {type(x).__name__}: non-tensor inputs travel as JSON "
                                "(None, bool, int, float, str and lists of them)")
            entries.append({"value": x})  # the parent relays it
            bases.append(None)
            continue
        if _not_plain(torch, x, known):
            raise TypeError(f"input {i} is a {_not_plain(torch, x, known)}: the arena carries plain strided tensors")
        base = x
        expanded = [d for d, (sz, st) in enumerate(zip(x.shape, x.stride(), strict=True)) if st == 0 and sz > 1]
        for d in expanded:
            base = base.narrow(d, 0, 1)
        n = base.numel() * base.element_size()
        e = {"dtype": str(x.dtype).removeprefix("torch."), "shape": list(x.shape), "stride": list(x.stride()),
             "offset": off}
        if expanded:
            e["base"] = list(base.shape)
            e["base_stride"] = list(base.stride())
        entries.append(e)
        bases.append(base)
        off += n + _pad(n)
    size = 0 if u8 is None else u8.numel()
    if off > size:
        raise ArenaTooSmall(region, off)
    for e, b in zip(entries, bases, strict=True):
        if b is not None and b.numel():
            n = b.numel() * b.element_size()
            u8[e["offset"]:e["offset"] + n].copy_(_bytes(torch, b))
    return entries


def _jsonable(x: Any) -> bool:
    if x is None or type(x) in (bool, int, str) or (type(x) is float and x == x and abs(x) != float("inf")):
        return True
    return type(x) in (list, tuple) and all(_jsonable(v) for v in x)


def _bytes(torch: Any, x: Any) -> Any:
    """``x``'s elements, contiguous, as a flat uint8 tensor (on x's device)."""
    return x.detach().resolve_conj().resolve_neg().contiguous().reshape(-1).view(torch.uint8)


def input_views(torch: Any, entries: list[dict[str, Any]], u8: Any) -> list[Any]:
    """The staged inputs as tensors over the arena (host memory), laid out as the header says
    (an expanded input as its base; ``blank`` expands it). Non-tensors: their value."""
    known = _dtypes(torch)
    out: list[Any] = []
    for e in entries:
        if "value" in e:
            out.append(e["value"])
            continue
        dt = known[e["dtype"]]
        shape = e.get("base", e["shape"])
        n = _nbytes(shape, dt)
        if e["offset"] + n > u8.numel():
            raise ArenaTooSmall("input", e["offset"] + n)
        out.append(u8[e["offset"]:e["offset"] + n].view(dt).reshape(shape) if n else
                   torch.empty(shape, dtype=dt))
    return out


def blank(torch: Any, e: dict[str, Any], device: Any) -> tuple[Any, Any]:
    """(the call's tensor, the tensor ``go`` copies into): unfilled, with the header's sizes,
    strides and dtype on ``device``. An expanded input is its base's ``expand``."""
    dt = _dtypes(torch)[e["dtype"]]
    if "base" in e:
        base = torch.empty_strided(e["base"], e["base_stride"], dtype=dt, device=device)
        return base.expand(e["shape"]), base
    x = torch.empty_strided(e["shape"], e["stride"], dtype=dt, device=device)
    return x, x


# -- outputs (written by the candidate worker: untrusted) ---------------------------------------

def output_layout(torch: Any, outs: list[Any]) -> tuple[list[dict[str, Any]], list[str], int]:
    """(header, devices, bytes needed) for the candidate's outputs."""
    known = _dtypes(torch)
    entries: list[dict[str, Any]] = []
    devices: list[str] = []
    off = 0
    for o in outs:
        what = _not_plain(torch, o, known)
        if what:
            entries.append({"type": what})
            devices.append(type(o).__name__)
            continue
        n = o.numel() * o.element_size()
        entries.append({"dtype": str(o.dtype).removeprefix("torch."), "shape": list(o.shape), "offset": off})
        devices.append(str(o.device))
        off += n + _pad(n)
    return entries, devices, off


def write_outputs(torch: Any, outs: list[Any], entries: list[dict[str, Any]], u8: Any) -> None:
    """Copy the plain outputs into the region at the header's offsets (D2H on a GPU, then sync)."""
    cuda = False
    for o, e in zip(outs, entries, strict=True):
        if "type" in e or not o.numel():
            continue
        n = o.numel() * o.element_size()
        cuda = cuda or o.device.type == "cuda"
        u8[e["offset"]:e["offset"] + n].copy_(_bytes(torch, o), non_blocking=o.device.type == "cuda")
    if cuda:
        torch.cuda.synchronize()


def read_outputs(torch: Any, entries: Any, u8: Any | None, device: Any, limit: int | None = None) -> list[Any]:
    """The candidate's outputs from the region, copied out of shared memory onto ``device``
    (private: later writes into the region change nothing): tensors, or the type name (a str)
    of anything that was not a plain tensor. The header is the candidate's: nothing in it is
    trusted. ``limit``: read nothing past this many bytes (the call's output bound, when the
    region was made bigger ahead of time). Raises Malformed."""
    size = 0 if u8 is None else u8.numel()
    if limit is not None:
        size = min(size, limit)
    if not isinstance(entries, list) or len(entries) > MAX_ENTRIES:
        raise Malformed(f"bad header: {str(entries)[:200]}")
    known = _dtypes(torch)
    spans: list[tuple[int, int]] = []
    out: list[Any] = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise Malformed(f"output {i}: bad entry")
        if "type" in e:
            out.append(str(e["type"])[:200])
            continue
        dt = known.get(e.get("dtype")) if isinstance(e.get("dtype"), str) else None
        shape, off = e.get("shape"), e.get("offset")
        if dt is None or not isinstance(shape, list) or len(shape) > MAX_DIMS or type(off) is not int \
                or off < 0 or not all(type(d) is int and d >= 0 for d in shape):
            raise Malformed(f"output {i}: bad entry {str(e)[:200]}")
        nbytes = _nbytes(shape, dt)
        if off % ALIGN or off + nbytes > size:
            raise Malformed(f"output {i}: {nbytes} bytes at offset {off} in a region of {size} bytes")
        if any(off < b and a < off + nbytes for a, b in spans):
            raise Malformed(f"output {i}: overlaps another output")
        spans.append((off, off + nbytes))
        if nbytes == 0:
            out.append(torch.empty(shape, dtype=dt, device=device))
            continue
        # a private copy, also where the region is on ``device`` already (a device arena)
        out.append(u8[off:off + nbytes].to(device, copy=True).view(dt).reshape(shape))
    return out


def inputs_intact(torch: Any, entries: list[dict[str, Any]], staged: list[Any], u8: Any) -> bool:
    """Whether the region still holds, byte for byte, the inputs the reference staged there."""
    for e, x in zip(entries, staged, strict=True):
        if "value" in e:
            continue
        base = x
        for d, (sz, st) in enumerate(zip(x.shape, x.stride(), strict=True)):
            if st == 0 and sz > 1:
                base = base.narrow(d, 0, 1)
        n = base.numel() * base.element_size()
        if n and not torch.equal(u8[e["offset"]:e["offset"] + n].to(x.device), _bytes(torch, base)):
            return False
    return True
