"""Issue 25 class 3a (torch compute not counted as torch). A C++ extension calls ``at::cpu::mm``,
the CPU GEMM kernel's entry point below the dispatcher: no op is dispatched, so neither the op
counter nor the profiler sees torch compute (valid under strict on the old code; ``at::matmul`` was
caught). Task: matmul. Expected: rejected custom_code.torch_compute (the link check of the
extension: torch kernels below the dispatcher)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# --- shared below-the-dispatcher extension (identical in every class-3 native candidate: one build)
_BELOW_CPP = r"""
#include <torch/extension.h>
#include <ATen/CPUFunctions.h>
#include <ATen/NativeFunctions.h>

extern "C" void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
                       const float*, const int*, const float*, const int*, const float*, float*, const int*);

// torch's CPU GEMM kernel called by its entry point: no dispatcher, no RecordFunction
torch::Tensor mm_cpu(torch::Tensor a, torch::Tensor b) { return at::cpu::mm(a, b); }

// the same through the dispatcher's redispatch (past RecordFunction)
torch::Tensor mm_redispatch(torch::Tensor a, torch::Tensor b) {
    return at::_ops::mm::redispatch(c10::DispatchKeySet(c10::DispatchKey::CPU), a, b);
}

// torch's native ReLU, below the dispatcher too
torch::Tensor relu_native(torch::Tensor x) { return at::native::relu(x); }

// the BLAS GEMM torch links (MKL's Fortran sgemm_), row-major C = A @ B as column-major C^T = B^T A^T
torch::Tensor mm_blas(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous();
    const int m = ac.size(0), k = ac.size(1), n = bc.size(1);
    auto c = torch::empty({m, n}, ac.options());
    const float one = 1.f, zero = 0.f;
    sgemm_("N", "N", &n, &m, &k, &one, bc.data_ptr<float>(), &n, ac.data_ptr<float>(), &k, &zero,
           c.data_ptr<float>(), &n);
    return c;
}

// torch's matmul through the dispatcher (counted when called; under strict the link check refuses it)
torch::Tensor mm_dispatched(torch::Tensor a, torch::Tensor b) { return at::mm(a, b); }
"""

_below = load_inline(name="redteam_below_lib", cpp_sources=_BELOW_CPP,
                     functions=["mm_cpu", "mm_redispatch", "relu_native", "mm_blas", "mm_dispatched"],
                     extra_cflags=["-O2"], verbose=False)
# --- end of shared below-the-dispatcher extension


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _below.mm_cpu(a, b)
