"""Seed kernel for LayerNorm over the last dim: one CUDA block per row (mean, variance, write)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;

__device__ float seed_block_sum(float v, float* sh) {
  const int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    __syncthreads();
  }
  const float r = sh[0];
  __syncthreads();
  return r;
}

__global__ void seed_layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                       const float* __restrict__ b, float* __restrict__ y,
                                       int64_t n, float eps) {
  __shared__ float sh[THREADS];
  const float* xr = x + (int64_t)blockIdx.x * n;
  float* yr = y + (int64_t)blockIdx.x * n;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += THREADS) s += xr[j];
  const float mean = seed_block_sum(s, sh) / (float)n;
  float v = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += THREADS) { const float d = xr[j] - mean; v += d * d; }
  const float rstd = rsqrtf(seed_block_sum(v, sh) / (float)n + eps);
  for (int64_t j = threadIdx.x; j < n; j += THREADS) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
}

torch::Tensor seed_layer_norm(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "seed_layer_norm: float32 CUDA tensor expected");
  const int64_t n = weight.numel();
  TORCH_CHECK(n > 0 && x.dim() >= 1 && x.size(-1) == n && bias.numel() == n,
              "seed_layer_norm: the last dim must match the weight and bias");
  auto xc = x.contiguous();
  auto wc = weight.contiguous();
  auto bc = bias.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t rows = xc.numel() / n;
  if (rows == 0) return y;
  seed_layer_norm_kernel<<<(unsigned)rows, THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), n, (float)eps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="seed_layer_norm_cuda_v1",
    cpp_sources=["torch::Tensor seed_layer_norm(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"],
    cuda_sources=[_CUDA],
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
