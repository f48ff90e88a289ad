"""Honest CPU candidate: fp32 GEMM as a cache-blocked C++ kernel (16 x 256 x 64 tiles,
rows of tiles in parallel). Task: matmul. Expected: valid at every profile."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>

torch::Tensor matmul_blocked(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul_blocked: (M,K) @ (K,N) expected");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "float32 expected");
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
    auto c = torch::zeros({M, N}, ac.options());
    const float* A = ac.data_ptr<float>();
    const float* B = bc.data_ptr<float>();
    float* C = c.data_ptr<float>();
    constexpr int64_t BM = 16, BK = 64, BN = 256;
    at::parallel_for(0, (M + BM - 1) / BM, 1, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) {
            const int64_t i0 = t * BM, i1 = std::min(M, i0 + BM);
            for (int64_t j0 = 0; j0 < N; j0 += BN) {
                const int64_t j1 = std::min(N, j0 + BN);
                for (int64_t k0 = 0; k0 < K; k0 += BK) {
                    const int64_t k1 = std::min(K, k0 + BK);
                    for (int64_t i = i0; i < i1; ++i) {
                        float* crow = C + i * N;
                        const float* arow = A + i * K;
                        for (int64_t k = k0; k < k1; ++k) {
                            const float av = arow[k];
                            const float* brow = B + k * N;
                            for (int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
                        }
                    }
                }
            }
        }
    });
    return c;
}
"""

_ext = load_inline(name="honest_cpu_matmul", cpp_sources=_CPP, functions=["matmul_blocked"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.matmul_blocked(a, b)
