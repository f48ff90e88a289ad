"""The slim compile cut (``KH_BUILD_SLIM=1``, set with the other cuts by harness/executors/cuts.py):
a ``load_inline`` CUDA build parsed with the part of torch's headers its code can use.

Stock ``load_inline`` puts ``#include <torch/extension.h>`` (396k preprocessed lines: the whole C++
frontend, pybind11 and torch's Python bindings) at the top of ``main.cpp`` and ``<torch/types.h>``
(324k: all of ATen's operators, the autograd factories) at the top of ``cuda.cu``, which nvcc
parses three times (cudafe++, cicc, the host compiler). A build here passes
``no_implicit_headers=True`` and its own preludes instead:

* ``cuda.cu``: ``ATen/core/Tensor.h`` (the Tensor class and its methods), ``ATen/Dispatch.h``,
  ``c10/util/Exception.h`` (``TORCH_CHECK``), ``ATen/ops/<name>.h`` for every ``torch::name(`` /
  ``at::name(`` the source calls that is an ATen operator, and the ``torch`` namespace as
  ``torch/types.h`` declares it (``using namespace at``, the ``kFloat32``-style constants); the
  candidate's own ``#include <torch/extension.h>`` is dropped (as the lite cut does). The source
  is otherwise unchanged. Not applied to a source that uses what only the full headers declare
  (pybind11, ``torch::nn``/``optim``/``jit``/``autograd``/``data``) or asks a factory for
  ``requires_grad`` (``torch::`` factories set it, ``at::`` ones do not).
* ``main.cpp``: when ``cpp_sources`` are only declarations of functions whose parameter and
  return types are tensors, tensor vectors or optionals, or plain numbers (the types whose
  Python conversion ``torch/csrc/utils/pybind.h`` and ``pybind11/stl.h`` define, so a call
  converts its arguments exactly as under ``torch/extension.h``), that prelude plus pybind:
  ``torch/csrc/utils/pybind.h``, ``pybind11/stl.h``, ``torch/csrc/Exceptions.h``
  (``wrap_pybind_function``). Other ``cpp_sources`` keep ``torch/extension.h``.

A source that does not compile this way is built again by the next tier (lite, then stock), and
the failure is remembered in the cache (``.failed``), so the cut never turns a good build into a
bad one; what compiles uses the same declarations of the same functions (an operator's
``torch::`` name resolves to its ``at::`` function, which is what the ``torch::`` factory calls).

Measured on the 2-core development box (2026-11-26, CPU seconds of one compile, the three kernels
of harness/bench/tools/compile_breakdown.py): ``cuda.cu`` 33-37 s with ``torch/types.h`` (the lite
cut), 18-19 s slim; ``main.cpp`` 19-25 s stock, 5.4-7.8 s slim (docs/performance.md).
"""

from __future__ import annotations

import functools
import inspect
import re
from pathlib import Path
from typing import Any

TORCH_NS = """namespace torch {  // as the types header of torch declares it
using namespace at;  // NOLINT
using std::nullopt;  // NOLINT
using std::optional;  // NOLINT
using Dtype = at::ScalarType;
constexpr auto kUInt8 = at::kByte; constexpr auto kInt8 = at::kChar; constexpr auto kInt16 = at::kShort;
constexpr auto kInt32 = at::kInt; constexpr auto kInt64 = at::kLong; constexpr auto kUInt16 = at::kUInt16;
constexpr auto kUInt32 = at::kUInt32; constexpr auto kUInt64 = at::kUInt64; constexpr auto kFloat16 = at::kHalf;
constexpr auto kFloat32 = at::kFloat; constexpr auto kFloat64 = at::kDouble;
constexpr auto kU8 = kUInt8; constexpr auto kU16 = kUInt16; constexpr auto kU32 = kUInt32; constexpr auto kU64 = kUInt64;
constexpr auto kI8 = kInt8; constexpr auto kI16 = kInt16; constexpr auto kI32 = kInt32; constexpr auto kI64 = kInt64;
constexpr auto kF16 = kFloat16; constexpr auto kF32 = kFloat32; constexpr auto kF64 = kFloat64;
}  // namespace torch
"""
NOTE = "// kernel-harness compile cut (slim): the headers this source can use, not all of torch (sandbox/build/slim.py)\n"
BASE = "#include <ATen/core/Tensor.h>\n#include <ATen/Dispatch.h>\n#include <c10/util/Exception.h>\n"
MAIN_PRELUDE = (NOTE + BASE + "#include <torch/csrc/utils/pybind.h>\n#include <pybind11/stl.h>\n"
                "#include <torch/csrc/Exceptions.h>\n" + TORCH_NS)
STOCK_MAIN = "#include <torch/extension.h>"
STOCK_CUDA = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>"  # what load_inline prepends

_EXT_H = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/extension\.h[>"][^\n]*$', re.M)
_FULL_ONLY = ("PYBIND11_", "py::", "pybind11", "torch::nn", "torch::optim", "torch::jit", "torch::data",
              "torch::autograd", "requires_grad")
_CALL = re.compile(r"\b(?:torch|at)::(\w+)\s*\(")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_DECL = re.compile(r"^(?P<ret>[\w:<>,\s&*]+?)\s*\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)$", re.S)
_SCALARS = {"int", "int64_t", "int32_t", "long", "longlong", "unsignedint", "uint64_t", "size_t", "float", "double",
            "bool"}
_TENSORS = {"torch::Tensor", "at::Tensor"}


def _allowed(t: str) -> bool:
    """A parameter or return type whose Python conversion the slim main.cpp declares as stock does."""
    t = re.sub(r"\bconst\b|&|\s", "", t)
    if t in _SCALARS or t in _TENSORS:
        return True
    m = re.fullmatch(r"(?:std|c10)::(vector|optional)<(.+)>", t)
    return bool(m) and (m[2] in _TENSORS or (m[1] == "vector" and m[2] in _SCALARS))


def _param_type(p: str) -> str:
    p = p.split("=", 1)[0].strip()
    m = re.fullmatch(r"(.*?[\w>&*\s])\s*\b[A-Za-z_]\w*", p)  # drop the parameter's name, if any
    return m[1] if m and _allowed(m[1]) else p


def declarations_only(cpp: str) -> bool:
    """``cpp`` holds nothing but includes and declarations of functions with allowed types."""
    body = _COMMENT.sub("", cpp)
    body = "\n".join(ln for ln in body.splitlines() if not re.match(r"\s*#\s*(include|pragma\s+once)\b", ln))
    stmts = [s.strip() for s in body.split(";")]
    if stmts and stmts[-1]:
        return False  # text after the last declaration: a definition or something else
    decls = [s for s in stmts if s]
    for s in decls:
        m = _DECL.match(s)
        if not m or not (m["ret"].strip() == "void" or _allowed(m["ret"])):
            return False
        params = [p for p in m["params"].split(",") if p.strip() and p.strip() != "void"]
        if not all(_allowed(_param_type(p)) for p in params):
            return False
    return bool(decls)


@functools.lru_cache(maxsize=1)
def _torch_include() -> Path | None:
    try:
        from torch.utils import cpp_extension as ce

        if "no_implicit_headers" not in inspect.signature(inspect.unwrap(ce.load_inline)).parameters:
            return None
        return Path(ce.include_paths()[0])
    except Exception:  # noqa: BLE001 - no cut without a torch that supports it
        return None


def cuda_prelude(source: str, include: Path) -> str:
    ops = sorted({n for n in _CALL.findall(source) if (include / "ATen" / "ops" / f"{n}.h").is_file()})
    return NOTE + BASE + "".join(f"#include <ATen/ops/{n}.h>\n" for n in ops) + TORCH_NS + \
        "#include <cuda.h>\n#include <cuda_runtime.h>\n"


def slim_sources(cpp_sources: Any, cuda_sources: Any) -> tuple[list[str], list[str]] | None:
    """(cpp_sources, cuda_sources) to build with ``no_implicit_headers=True``, each with its
    prelude; None when neither file can be slimmed (or this torch has no ``no_implicit_headers``)."""
    include = _torch_include()
    if include is None or not cuda_sources:
        return None
    cpp = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources or [])
    cuda = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources)
    if not all(isinstance(x, str) for x in cpp + cuda):
        return None
    cu = "\n".join(cuda)
    cuda_ok = not any(k in cu for k in _FULL_ONLY)
    main_ok = declarations_only("\n".join(cpp))
    if not (cuda_ok or main_ok):
        return None
    if cuda_ok:
        cut = [_EXT_H.sub("// (torch/extension.h: see the note above)", x) for x in cuda]
        cuda_out = [cuda_prelude("\n".join(cut), include), *cut]
    else:
        cuda_out = [STOCK_CUDA, *cuda]
    if main_ok:
        cpp_out = [MAIN_PRELUDE, *(_EXT_H.sub("", x) for x in cpp)]
    else:
        cpp_out = [STOCK_MAIN, *cpp]
    return cpp_out, cuda_out
