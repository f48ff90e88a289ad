"""The file a candidate worker's ``fetch`` writes and the reference worker's ``check`` reads.

Raw tensor bytes behind a small JSON header, instead of ``torch.save``: no pickle to parse on
the trusted side, and no zip CRC to compute over every byte of a 128 MB output. Layout:

    b"KHOUT1\\n" | header length (8 bytes, little endian) | JSON header | data

The header lists each output as ``{"dtype": "float32", "shape": [...], "offset": N}`` (a plain,
strided tensor; offsets are 64-byte aligned, from the start of the data) or ``{"type": "Name"}``
(anything else: a tensor subclass, a sparse tensor, a Python object). The file is written in the
candidate's process, so the reader trusts nothing in it: dtypes come from a fixed table, sizes
are checked against the file, and a malformed file is an answer about the output, not an error.
"""

from __future__ import annotations

import json
import os
from typing import Any

MAGIC = b"KHOUT1\n"
ALIGN = 64
MAX_HEADER = 1 << 20
MAX_DIMS = 32


def _dtypes(torch: Any) -> dict[str, Any]:
    names = ["float64", "float32", "float16", "bfloat16", "complex128", "complex64", "complex32", "int64", "int32",
             "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool", "float8_e4m3fn", "float8_e5m2",
             "float8_e4m3fnuz", "float8_e5m2fnuz"]
    return {n: getattr(torch, n) for n in names if isinstance(getattr(torch, n, None), torch.dtype)}


def _pad(n: int) -> int:
    return (-n) % ALIGN


def _not_plain(torch: Any, o: Any, known: dict[str, Any]) -> str | None:
    """Why ``o`` is not a plain tensor this format carries (None when it is)."""
    if type(o) is not torch.Tensor:
        return type(o).__name__
    if o.layout != torch.strided:
        return f"Tensor with layout {o.layout}"
    if o.is_quantized:
        return "quantized Tensor"
    if str(o.dtype).removeprefix("torch.") not in known:
        return f"Tensor of dtype {o.dtype}"
    return None


def write(torch: Any, outs: list[Any], path: str) -> list[str]:
    """Write ``outs`` to ``path``; return each output's device (or type name)."""
    entries: list[dict[str, Any]] = []
    datas: list[Any] = []
    devices: list[str] = []
    known = _dtypes(torch)
    offset = 0
    for o in outs:
        what = _not_plain(torch, o, known)
        if what:
            entries.append({"type": what})
            devices.append(type(o).__name__)
            continue
        name = str(o.dtype).removeprefix("torch.")
        devices.append(str(o.device))
        host = o.detach().resolve_conj().resolve_neg().contiguous().cpu()
        nbytes = host.numel() * host.element_size()
        entries.append({"dtype": name, "shape": list(host.shape), "offset": offset})
        datas.append(host.reshape(-1).view(torch.uint8).numpy() if nbytes else None)
        offset += nbytes + _pad(nbytes)
    header = json.dumps({"outputs": entries}).encode()
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(len(header).to_bytes(8, "little"))
        f.write(header)
        f.write(b"\0" * _pad(len(MAGIC) + 8 + len(header)))
        for d in datas:
            if d is not None:
                f.write(memoryview(d))
                f.write(b"\0" * _pad(d.nbytes))
    return devices


class Malformed(ValueError):
    """The file is not what ``write`` produces."""


def read(torch: Any, path: str, device: Any) -> list[Any]:
    """The outputs in ``path`` on ``device``: tensors, or the type name (a str) of anything that
    was not a plain tensor. Raises Malformed."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        if f.read(len(MAGIC)) != MAGIC:
            raise Malformed("not an output file (bad magic)")
        hlen = int.from_bytes(f.read(8), "little")
        if hlen > MAX_HEADER:
            raise Malformed(f"header of {hlen} bytes")
        try:
            header = json.loads(f.read(hlen))
            entries = header["outputs"]
            assert isinstance(entries, list)
        except (ValueError, KeyError, TypeError, AssertionError) as e:
            raise Malformed(f"bad header: {e}") from None
        start = len(MAGIC) + 8 + hlen
        start += _pad(start)
        f.seek(start)
        data = bytearray(size - start)
        f.readinto(data)
    known = _dtypes(torch)
    out: list[Any] = []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise Malformed(f"output {i}: bad entry")
        if "type" in e:
            out.append(str(e["type"])[:200])
            continue
        dt = known.get(e.get("dtype"))
        shape, off = e.get("shape"), e.get("offset")
        if dt is None or not isinstance(shape, list) or len(shape) > MAX_DIMS or not isinstance(off, int) \
                or off < 0 or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise Malformed(f"output {i}: bad entry {str(e)[:200]}")
        numel = 1
        for d in shape:
            numel *= d
        nbytes = numel * dt.itemsize
        if off % ALIGN or off + nbytes > len(data):
            raise Malformed(f"output {i}: {nbytes} bytes at offset {off} in {len(data)} bytes of data")
        if nbytes == 0:
            out.append(torch.empty(shape, dtype=dt, device=device))
            continue
        flat = torch.frombuffer(data, dtype=torch.uint8, count=nbytes, offset=off)
        out.append(flat.view(dt).reshape(shape).to(device))
    return out
