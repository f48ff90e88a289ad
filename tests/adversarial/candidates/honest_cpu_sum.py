"""Honest CPU candidate: sum over one dimension as a C++ extension. The tensor is viewed as
(outer, reduced, inner) so any dim and any shape work; rows are accumulated in order.
Task: sum_dim. Expected: valid at every profile."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

torch::Tensor sum_dim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "sum_dim: float32 CPU tensor expected");
    auto xc = x.contiguous();
    if (dim < 0) dim += xc.dim();
    TORCH_CHECK(dim >= 0 && dim < xc.dim(), "sum_dim: dim out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    const int64_t red = xc.size(dim);
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < xc.dim(); ++d) if (d != dim) shape.push_back(xc.size(d));
    auto out = torch::zeros(shape, xc.options());
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, outer, 1, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
            float* acc = dst + o * inner;
            const float* base = src + o * red * inner;
            for (int64_t r = 0; r < red; ++r) {
                const float* row = base + r * inner;
                for (int64_t i = 0; i < inner; ++i) acc[i] += row[i];
            }
        }
    });
    return out;
}
"""

_ext = load_inline(name="honest_cpu_sum", cpp_sources=_CPP, functions=["sum_dim"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_dim(x, self.dim)
