"""Seed kernel for sum over a dim: one CUDA thread per output element, looping over the reduced dim."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <vector>

// x viewed as [outer, R, inner]; thread t computes output (t / inner, t % inner). Neighbouring
// threads read neighbouring inner elements, so loads coalesce.
__global__ void seed_sum_dim_kernel(const float* __restrict__ x, float* __restrict__ y,
                                    int64_t outputs, int64_t R, int64_t inner) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < outputs; t += stride) {
    const int64_t o = t / inner, i = t % inner;
    const float* xr = x + o * R * inner + i;
    float acc = 0.f;
    for (int64_t r = 0; r < R; ++r) acc += xr[r * inner];
    y[t] = acc;
  }
}

torch::Tensor seed_sum_dim(torch::Tensor x, int64_t dim) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "seed_sum_dim: float32 CUDA tensor expected");
  const int64_t nd = x.dim();
  if (dim < 0) dim += nd;
  TORCH_CHECK(dim >= 0 && dim < nd, "seed_sum_dim: dim out of range");
  auto xc = x.contiguous();
  int64_t outer = 1, inner = 1;
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < nd; ++d) {
    if (d < dim) outer *= xc.size(d);
    if (d > dim) inner *= xc.size(d);
    if (d != dim) shape.push_back(xc.size(d));
  }
  const int64_t R = xc.size(dim);
  auto y = torch::empty(shape, xc.options());
  const int64_t outputs = outer * inner;
  if (outputs == 0) return y;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((outputs + threads - 1) / threads, 1 << 20);
  seed_sum_dim_kernel<<<(unsigned)blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), outputs, R, inner);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="seed_sum_dim_cuda_v1",
    cpp_sources=["torch::Tensor seed_sum_dim(torch::Tensor x, int64_t dim);"],
    cuda_sources=[_CUDA],
    functions=["seed_sum_dim"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.seed_sum_dim(x, self.dim)
