"""Compile cuts that are safe for every candidate, applied once in the trusted parent.

* ``TORCH_CUDA_ARCH_LIST`` limited to the GPUs present (only when the user has not set it):
  nvcc then emits code for one architecture. It is part of the build-cache key, so build and
  timing workers, which inherit it, agree on the cache entry.
* ``KH_BUILD_PCH=1``: a precompiled ``torch/extension.h`` per common flag set (none, ``-O2``,
  ``-O3``), built by the trusted parent the first time a candidate's C++ build can use it and
  given to builds with exactly those flags and no include paths of their own
  (``sandbox/build/pch.py``; GCC only, others parse the header as before).
* ``KH_BUILD_LITE=1``: CUDA sources are first built without their ``#include <torch/extension.h>``
  (load_inline already includes ``<torch/types.h>``); a source that needs the full header is
  built again unchanged (``sandbox.build.buildcache.lite_cuda_sources``). nvcc parses torch's headers
  three times per CUDA source, so this is the cut that reaches the nvcc half of a build.
* ``KH_BUILD_SLIM=1``: before that, a CUDA build is tried with the headers its code can use
  (``sandbox/build/slim.py``): ``ATen/core/Tensor.h`` and the ATen operators it calls for
  ``cuda.cu``, pybind and the tensor casters for a ``main.cpp`` of plain declarations. About half
  the nvcc time and a third of main.cpp's on the development box; a source that does not build
  so goes on to the lite cut, then to the stock build.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass
class CutsApplied:
    arch_list: str | None = None  # what TORCH_CUDA_ARCH_LIST was set to (None: left alone)
    pch: bool = False  # KH_BUILD_PCH: precompiled headers per flag set, built on demand
    lite: bool = False  # KH_BUILD_LITE: CUDA sources tried without torch/extension.h
    slim: bool = False  # KH_BUILD_SLIM: CUDA builds tried with the headers their code uses first
    note: str = ""


def present_arch_list() -> str | None:
    """"9.0" (or "8.0;9.0" for mixed GPUs) for the visible GPUs; None without CUDA."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        caps = sorted({torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())})
    except Exception:  # noqa: BLE001 - no usable CUDA: leave the default
        return None
    return ";".join(f"{a}.{b}" for a, b in caps) or None


def apply_compile_cuts(pch: bool = True, arch: bool = True, lite: bool = True, slim: bool = True) -> CutsApplied:
    """Set the environment the sandboxed workers inherit; return what was applied."""
    out = CutsApplied()
    if slim:
        os.environ["KH_BUILD_SLIM"] = "1"
        out.slim = True
    if lite:
        os.environ["KH_BUILD_LITE"] = "1"
        out.lite = True
    if arch and not os.environ.get("TORCH_CUDA_ARCH_LIST"):
        a = present_arch_list()
        if a:
            os.environ["TORCH_CUDA_ARCH_LIST"] = a
            out.arch_list = a
    if pch:
        os.environ["KH_BUILD_PCH"] = "1"
        out.pch = True
    return out
