"""Seed kernel for gelu (exact GELU 0.5 x (1 + erf(x / sqrt(2)))) on the CPU: one plain C++ loop over the elements, float32."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor seed_gelu(torch::Tensor x) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "seed_gelu: float32 CPU tensor expected");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* xp = xc.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float v = xp[i];
    yp[i] = 0.5f * v * (1.f + std::erf(v * 0.70710678118654752f));
  }
  return y;
}
"""

_ext = load_inline(
    name="seed_gelu_cpp_v1",
    cpp_sources=[_CPP],
    functions=["seed_gelu"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.seed_gelu(x)
