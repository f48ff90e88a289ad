"""Honest CPU candidate: row softmax as a C++ extension (max-subtracted, one row per task).
Task: softmax. Expected: valid at every profile."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor softmax_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax_lastdim: float32 expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const int64_t cols = xc.size(-1);
    const int64_t rows = cols == 0 ? 0 : xc.numel() / cols;
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    at::parallel_for(0, rows, 4, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float* in = src + r * cols;
            float* o = dst + r * cols;
            float mx = -INFINITY;
            for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, in[c]);
            double total = 0.0;
            for (int64_t c = 0; c < cols; ++c) {
                const float e = std::exp(in[c] - mx);
                o[c] = e;
                total += e;
            }
            const float inv = static_cast<float>(1.0 / total);
            for (int64_t c = 0; c < cols; ++c) o[c] *= inv;
        }
    });
    return out;
}
"""

_ext = load_inline(name="honest_cpu_softmax", cpp_sources=_CPP, functions=["softmax_lastdim"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_lastdim(x)
