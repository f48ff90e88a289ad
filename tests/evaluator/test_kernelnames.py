"""Whose kernel is it (sandbox/rules/kernelnames.py): the names a candidate's source declares, the
library kernels, and the attribution of a launched kernel (issue 25, class 3 on CUDA). The names
below are the profiler's spellings recorded on an H200 (docs/records/data/session12-2026-11-26/)."""

from __future__ import annotations

import shutil

import pytest

from sandbox.rules import kernelnames as kn

CUBLAS = ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_"
          "execute_kernel__5x_cublas")
TORCH_FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
              "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")

SOURCE = '''
import torch, triton, triton.language as tl
from torch.utils.cpp_extension import load_inline
cuda_src = r"""
template <typename T>
__global__ void __launch_bounds__(256) scale_kernel(const T* x, T* y, long n) { }
extern "C" __global__ void add_one(float* y) { }
__global__ void sm80_xmma_gemm_decoy(float* y) { }
__global__ void triton_poi_fused_relu_0(float* y) { }
"""
raw = cupy.RawKernel(r"extern \\"C\\" __global__ void raw_relu(float* y) {}", "raw_relu")

@triton.autotune(configs=[], key=["n"])
@triton.jit
def relu_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass

def helper(x):
    return x
'''


def test_names_a_source_declares() -> None:
    got = kn.source_kernels(SOURCE)
    assert {"scale_kernel", "add_one", "sm80_xmma_gemm_decoy", "raw_relu", "relu_kernel"} <= got
    assert "helper" not in got
    assert "triton_poi_fused_relu_0" not in got  # Inductor's spelling is never taken from a candidate


@pytest.mark.parametrize("spelling, base, ident", [
    ("probe_own_relu_kernel(float const*, float*, long)", "probe_own_relu_kernel", "probe_own_relu_kernel"),
    (TORCH_FILL, "at::native::vectorized_elementwise_kernel", "vectorized_elementwise_kernel"),
    ("void (anonymous namespace)::k<(int)128>(float*)", "{anon}::k", "k"),
    (CUBLAS, CUBLAS, CUBLAS),
    ("relu_kernel", "relu_kernel", "relu_kernel"),
])
def test_base_name_and_identifier(spelling: str, base: str, ident: str) -> None:
    assert kn.base_name(spelling) == base
    assert kn.identifier(spelling) == ident


def test_attribution_library_first_then_candidate_then_nobody() -> None:
    lib = kn.LibraryKernels(frozenset({CUBLAS, TORCH_FILL}), available=True)
    decoy_source = SOURCE + f'\nx = r"""__global__ void {CUBLAS}(float* y) {{ }}"""\n'
    cand = kn.candidate_kernels(decoy_source)
    got = kn.attribute([CUBLAS, TORCH_FILL, "relu_kernel", "scale_kernel<float>(float const*, float*, long)",
                        "triton_poi_fused_relu_0", "cupy_add__float32_float32_float32", "raw_relu"], cand, lib)
    assert got == {CUBLAS: kn.LIBRARY,  # declared by the candidate too: still cuBLAS's
                   TORCH_FILL: kn.LIBRARY, "relu_kernel": kn.CANDIDATE,
                   "scale_kernel<float>(float const*, float*, long)": kn.CANDIDATE,
                   "triton_poi_fused_relu_0": kn.FOREIGN, "cupy_add__float32_float32_float32": kn.FOREIGN,
                   "raw_relu": kn.CANDIDATE}
    # the profiler's spacing may differ from c++filt's: spaces do not matter
    assert TORCH_FILL.replace(", ", ",") in lib


def test_cuobjdump_symbols_are_parsed_and_demangled() -> None:
    text = ("\nsymbols:\nSTT_SECTION      STB_LOCAL                    .text._Z21probe_own_relu_kernelPKfPfl\n"
            "STT_FUNC         STB_GLOBAL   STO_ENTRY       _Z21probe_own_relu_kernelPKfPfl\n"
            "STT_FUNC         STB_LOCAL                    _Z6helperv\n")
    syms = kn.parse_symbols(text)
    assert syms == ["_Z21probe_own_relu_kernelPKfPfl"]
    if shutil.which("c++filt") is None:
        pytest.skip("binutils c++filt is not installed")
    assert kn.demangle(syms, shutil.which("c++filt")) == ["probe_own_relu_kernel(float const*, float*, long)"]


def test_library_listing_says_why_when_it_cannot_list(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(kn, "_tools", lambda: (None, None))
    monkeypatch.setattr(kn, "library_files", lambda: [])
    kn._lib_cache.clear()
    got = kn.library_kernels(tmp_path)
    assert not got.available and got.why
