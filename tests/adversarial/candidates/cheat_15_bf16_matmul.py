"""Cheat #15 (precision downcast). Packs both fp32 operands as bfloat16 ("halves the memory
traffic, the tensor cores would love it") and accumulates in fp32: ~3 significant digits.
Task: matmul (fp32, atol=rtol=1e-4). Expected: incorrect correctness.tolerance."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <c10/util/BFloat16.h>
#include <vector>

torch::Tensor matmul_bf16_packed(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "shapes");
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
    std::vector<c10::BFloat16> A(M * K), B(K * N);
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    for (int64_t i = 0; i < M * K; ++i) A[i] = c10::BFloat16(pa[i]);
    for (int64_t i = 0; i < K * N; ++i) B[i] = c10::BFloat16(pb[i]);
    auto c = torch::zeros({M, N}, ac.options());
    float* C = c.data_ptr<float>();
    for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) {
            const float av = static_cast<float>(A[i * K + k]);
            for (int64_t j = 0; j < N; ++j) C[i * N + j] += av * static_cast<float>(B[k * N + j]);
        }
    return c;
}
"""

_ext = load_inline(name="redteam_bf16_matmul", cpp_sources=_CPP, functions=["matmul_bf16_packed"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.matmul_bf16_packed(a, b)
