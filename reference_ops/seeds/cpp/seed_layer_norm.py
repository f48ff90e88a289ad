"""Seed kernel for LayerNorm over the last dim on the CPU: per row mean and variance in double."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor seed_layer_norm(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "seed_layer_norm: float32 CPU tensor expected");
  const int64_t n = weight.numel();
  TORCH_CHECK(n > 0 && x.dim() >= 1 && x.size(-1) == n && bias.numel() == n,
              "seed_layer_norm: the last dim must match the weight and bias");
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto bc = bias.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t rows = xc.numel() / n;
  const float* xp = xc.data_ptr<float>();
  const float* wp = wc.data_ptr<float>();
  const float* bp = bc.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = xp + r * n;
    float* yr = yp + r * n;
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += xr[j];
    const double mean = s / n;
    double v = 0.0;
    for (int64_t j = 0; j < n; ++j) { const double d = xr[j] - mean; v += d * d; }
    const double rstd = 1.0 / std::sqrt(v / n + eps);
    for (int64_t j = 0; j < n; ++j) yr[j] = (float)((xr[j] - mean) * rstd) * wp[j] + bp[j];
  }
  return y;
}
"""

_ext = load_inline(
    name="seed_layer_norm_cpp_v1",
    cpp_sources=[_CPP],
    functions=["seed_layer_norm"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        # the reference's parameters, made and perturbed in the same order (same seed, same weights)
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.add_(0.1 * torch.randn(dim))
            self.norm.bias.add_(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.seed_layer_norm(x, self.norm.weight, self.norm.bias, self.norm.eps)
