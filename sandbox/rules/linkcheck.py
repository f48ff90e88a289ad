"""The link check: what each shared object the candidate brought into its process asks the dynamic
linker for (its undefined dynamic symbols), sorted into what the rule sets refuse.

Torch counts its compute at the dispatcher (sandbox/rules/opcount.py). An extension can call below it:
``at::cpu::mm`` (a kernel's entry point), ``at::native::*``, ``at::cuda::*`` kernels and BLAS
handles, ``at::_ops::<op>::redispatch``, or a library's GEMM (cuBLAS, cuDNN, oneDNN, MKL, BLAS)
directly; or it can switch the counting off (``at::enableRecordFunction``, removing or clearing
callbacks, swapping the thread-local state). Each of those needs a symbol from torch's or the
library's shared objects, resolved when the extension is loaded, so reading the extension's
``.dynsym`` names it (docs/evaluator.md, "The link check", says what this does not see:
``dlsym`` by a name built at run time, raw addresses, code written at run time).

Categories (the parent turns them into verdicts, sandbox/rules/customcode.py):

* ``record_function``: the counting machinery -> ``custom_code.counter_disabled``;
* ``below_dispatcher``: torch kernels called past the dispatcher -> ``custom_code.torch_compute``
  (either rule set: uncounted torch compute would pass for the candidate's own);
* ``library``: a compute library's entry points -> ``custom_code.library_compute``;
* ``op_call``: ``at::_ops::<compute op>::call`` (counted when called) -> refused under strict.

Also used for ``ctypes`` look-ups by name (the audit hook's ``ctypes.dlsym``, sandbox/rules/monitors.py).
Standard library only; ELF64 little-endian (x86-64, aarch64).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

RECORD_FUNCTION = ("enableRecordFunction", "set_record_function_tls_", "removeCallback", "disableCallback",
                   "clearCallbacks", "clearGlobalCallbacks", "clearThreadLocalCallbacks", "setThreadLocalState",
                   "ThreadLocalStateGuard")
_AT = re.compile(r"^_ZNK?2at")
# first names under at::cuda / at::cpu that are streams, devices, events, allocators and properties
_CUDA_OK = re.compile(r"^(getCurrentCUDAStream|getDefaultCUDAStream|getStreamFromPool|setCurrentCUDAStream|"
                      r"getCurrentDeviceProperties|getDeviceProperties|device_count|current_device|set_device|"
                      r"warp_size|get\w*Allocator|CUDAStream|CUDAEvent|\w*CUDAGuard|detail|CachingHostAllocator\w*|"
                      r"is_available|getNumGPUs|canDeviceAccessPeer)$")
_CPU_OK = re.compile(r"^(is_\w+|L1d_cache_size|L2_cache_size|get_cpu_capability|init_cpuinfo)$")
_LIBRARY = re.compile(r"^(cublas|cublasLt|cudnn|cusparse|cusolver|cufft|dnnl_|mkl_|MKL_|cblas_|[sdchz]gemm_?$|"
                      r"[sdchz]gemv_?$|openblas|libxsmm_|_ZN4dnnl|_ZN4ideep|_ZN3mkl|_ZN8cudnn_)")
_OPS = re.compile(r"^_ZN2at4_ops(\d+)")


def _ops_parts(sym: str) -> tuple[str, str] | None:
    """``_ZN2at4_ops19empty_memory_format4callE...`` -> ("empty_memory_format", "call")."""
    m = _OPS.match(sym)
    if not m:
        return None
    n, rest = int(m.group(1)), sym[m.end():]
    struct_name, rest = rest[:n], rest[n:]
    m2 = re.match(r"(\d+)", rest)
    if not m2:
        return struct_name, ""
    k = int(m2.group(1))
    return struct_name, rest[m2.end():m2.end() + k]


def classify(sym: str, op_is_compute: Callable[[str], bool] | None = None) -> str | None:
    """The category of one undefined symbol (None: allowed). ``op_is_compute`` maps an
    ``at::_ops`` struct name (``add_Tensor``) to whether that op computes; without it ``call``
    references are not judged."""
    if any(k in sym for k in RECORD_FUNCTION) and (sym.startswith("_ZN2at") or sym.startswith("_ZNK2at")):
        return "record_function"
    if _LIBRARY.match(sym):
        return "library"
    ops = _ops_parts(sym)
    if ops is not None:
        struct_name, method = ops
        if method.startswith("redispatch"):
            return "below_dispatcher"
        if method == "call" and op_is_compute is not None and op_is_compute(struct_name):
            return "op_call"
        return None
    m = _AT.match(sym)
    if not m:
        return None
    names = _idents(sym[m.end():], 2)
    inner, first = (names + ["", ""])[:2]
    if inner == "native" or inner.startswith("composite") or inner in ("mps", "xpu", "mkldnn", "meta"):
        return None if inner == "meta" else "below_dispatcher"  # at::meta:: computes shapes only
    if inner == "cpu":
        return None if _CPU_OK.match(first) else "below_dispatcher"
    if inner == "cuda":
        return None if _CUDA_OK.match(first) else "below_dispatcher"
    return None


def _idents(rest: str, k: int) -> list[str]:
    """The first ``k`` length-prefixed identifiers of a mangled nested name."""
    out: list[str] = []
    while len(out) < k:
        m = re.match(r"(\d+)", rest)
        if not m:
            break
        n = int(m.group(1))
        out.append(rest[m.end():m.end() + n])
        rest = rest[m.end() + n:]
    return out


def undefined_symbols(path: str) -> list[str]:
    """The names of the undefined dynamic symbols of an ELF64 little-endian shared object.
    Raises ValueError for anything else (the caller says so in the evidence)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not an ELF64 little-endian object")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out: list[str] = []
    for sh in sections:
        if sh[1] != 11:  # SHT_DYNSYM
            continue
        strtab = sections[sh[6]]
        str_off = strtab[4]
        off, size, entsize = sh[4], sh[5], sh[9] or 24
        for i in range(1, size // entsize):
            name_off, _info, _other, shndx = struct.unpack_from("<IBBH", data, off + i * entsize)
            if shndx != 0 or not name_off:
                continue
            end = data.index(b"\0", str_off + name_off)
            out.append(data[str_off + name_off:end].decode("ascii", "replace"))
    return out


def scan(paths: list[str], op_is_compute: Callable[[str], bool] | None = None) -> dict[str, dict[str, list[str]]]:
    """{path: {category: [symbols, at most 8]}} for the objects that ask for anything refused;
    an unreadable object is listed under ``unreadable``."""
    found: dict[str, dict[str, list[str]]] = {}
    for p in paths:
        try:
            syms = undefined_symbols(p)
        except (OSError, ValueError, struct.error, IndexError) as e:
            found[p] = {"unreadable": [f"{type(e).__name__}: {e}"[:200]]}
            continue
        cats: dict[str, list[str]] = {}
        for s in syms:
            c = classify(s, op_is_compute)
            if c is not None and len(cats.setdefault(c, [])) < 8:
                cats[c].append(s)
        if cats:
            found[p] = cats
    return found
