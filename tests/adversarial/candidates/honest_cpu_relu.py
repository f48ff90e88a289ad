"""Honest CPU candidate: ReLU as a C++ extension, parallel over chunks with at::parallel_for.
Task: relu. Expected: valid at every profile (small, small_extra*)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

torch::Tensor relu_fwd(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "relu_fwd: float32 CPU tensor expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, xc.numel(), 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const float v = src[i];
            dst[i] = v < 0.f ? 0.f : v;
        }
    });
    return out;
}
"""

_ext = load_inline(name="honest_cpu_relu", cpp_sources=_CPP, functions=["relu_fwd"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_fwd(x)
