"""Seed kernel for softmax over dim 1: one CUDA block per row (max, sum of exp, write), float32."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 256;

// Block-wide max (op 0) or sum (op 1) through shared memory; every thread gets the result.
__device__ float seed_block_reduce(float v, float* sh, int op) {
  const int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] = op == 0 ? fmaxf(sh[t], sh[t + s]) : sh[t] + sh[t + s];
    __syncthreads();
  }
  const float r = sh[0];
  __syncthreads();
  return r;
}

// x viewed as [outer, R, inner]; block b handles the row (b / inner, :, b % inner).
__global__ void seed_softmax_kernel(const float* __restrict__ x, float* __restrict__ y,
                                    int64_t R, int64_t inner) {
  __shared__ float sh[THREADS];
  const int64_t o = blockIdx.x / inner, i = blockIdx.x % inner;
  const float* xr = x + o * R * inner + i;
  float* yr = y + o * R * inner + i;
  float m = -INFINITY;
  for (int64_t r = threadIdx.x; r < R; r += THREADS) m = fmaxf(m, xr[r * inner]);
  m = seed_block_reduce(m, sh, 0);
  float s = 0.f;
  for (int64_t r = threadIdx.x; r < R; r += THREADS) s += expf(xr[r * inner] - m);
  s = seed_block_reduce(s, sh, 1);
  for (int64_t r = threadIdx.x; r < R; r += THREADS) yr[r * inner] = expf(xr[r * inner] - m) / s;
}

torch::Tensor seed_softmax(torch::Tensor x, int64_t dim) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "seed_softmax: float32 CUDA tensor expected");
  const int64_t nd = x.dim();
  if (dim < 0) dim += nd;
  TORCH_CHECK(dim >= 0 && dim < nd, "seed_softmax: dim out of range");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
  for (int64_t d = dim + 1; d < nd; ++d) inner *= xc.size(d);
  const int64_t R = xc.size(dim);
  if (outer * inner == 0 || R == 0) return y;
  seed_softmax_kernel<<<(unsigned)(outer * inner), THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), R, inner);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="seed_softmax_cuda_v1",
    cpp_sources=["torch::Tensor seed_softmax(torch::Tensor x, int64_t dim);"],
    cuda_sources=[_CUDA],
    functions=["seed_softmax"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.seed_softmax(x, 1)
