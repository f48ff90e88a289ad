"""The plain-tensor format shared by the arena's writer and its trusted reader (sandbox/worker/arena.py):
the dtypes an output may have (a fixed table: the reader never takes a dtype name from the
untrusted side as anything but a key into it), the 64-byte alignment of each tensor's bytes, the
limit on dimensions, and what counts as a plain tensor."""

from __future__ import annotations

from typing import Any

ALIGN = 64
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


class Malformed(ValueError):
    """The file is not what ``write`` produces."""
