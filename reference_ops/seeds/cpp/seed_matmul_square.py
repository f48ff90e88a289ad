"""Seed kernel for C = A @ B (2-D, float32) on the CPU: an i-k-j loop nest (row-major, contiguous)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor seed_matmul(torch::Tensor A, torch::Tensor B) {
  TORCH_CHECK(A.device().is_cpu() && B.device().is_cpu() && A.scalar_type() == torch::kFloat32 &&
              B.scalar_type() == torch::kFloat32, "seed_matmul: float32 CPU tensors expected");
  TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "seed_matmul: A[M, K] @ B[K, N] expected");
  auto a = A.contiguous();
  auto b = B.contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  const float* ap = a.data_ptr<float>();
  const float* bp = b.data_ptr<float>();
  float* cp = c.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i) {
    float* ci = cp + i * N;
    for (int64_t j = 0; j < N; ++j) ci[j] = 0.f;
    for (int64_t k = 0; k < K; ++k) {
      const float aik = ap[i * K + k];
      const float* bk = bp + k * N;
      for (int64_t j = 0; j < N; ++j) ci[j] += aik * bk[j];
    }
  }
  return c;
}
"""

_ext = load_inline(
    name="seed_matmul_square_cpp_v1",
    cpp_sources=[_CPP],
    functions=["seed_matmul"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return _ext.seed_matmul(A, B)
