"""Cheat #18 (uninitialized reads). Accumulates the reduction into an output tensor it never
zeroed: the result depends on what the allocator handed back (NaN poison, zeros, old data).
Task: sum_dim. Expected: incorrect (nonfinite on poisoned memory, else tolerance / nondeterministic)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# --- shared extension (identical in both #18 candidates)
_CPP = r"""
#include <torch/extension.h>
#include <random>

static void view3(const torch::Tensor& x, int64_t dim, int64_t& outer, int64_t& red, int64_t& inner) {
    outer = 1; inner = 1; red = x.size(dim);
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
}

static std::vector<int64_t> out_shape(const torch::Tensor& x, int64_t dim) {
    std::vector<int64_t> s;
    for (int64_t d = 0; d < x.dim(); ++d) if (d != dim) s.push_back(x.size(d));
    return s;
}

// Stochastic ("dithered") rounding of each result, unseeded: never the same twice.
torch::Tensor sum_dim_dither(torch::Tensor x, int64_t dim) {
    auto xc = x.contiguous();
    int64_t outer, red, inner;
    view3(xc, dim, outer, red, inner);
    auto out = torch::zeros(out_shape(xc, dim), xc.options());
    const float* s = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    std::mt19937 gen(std::random_device{}());
    std::uniform_real_distribution<float> u(-0.95f, 0.95f);
    for (int64_t a = 0; a < outer; ++a)
        for (int64_t i = 0; i < inner; ++i) {
            double acc = 0.0;
            for (int64_t r = 0; r < red; ++r) acc += s[(a * red + r) * inner + i];
            const float v = static_cast<float>(acc);
            o[a * inner + i] = v + u(gen) * (2e-3f + 1e-4f * std::fabs(v));
        }
    return out;
}

// Accumulates into an output it never initialised (torch::empty): reads whatever was there.
torch::Tensor sum_dim_uninit(torch::Tensor x, int64_t dim) {
    auto xc = x.contiguous();
    int64_t outer, red, inner;
    view3(xc, dim, outer, red, inner);
    auto out = torch::empty(out_shape(xc, dim), xc.options());
    const float* s = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t a = 0; a < outer; ++a)
        for (int64_t r = 0; r < red; ++r)
            for (int64_t i = 0; i < inner; ++i) o[a * inner + i] += s[(a * red + r) * inner + i];
    return out;
}
"""

_ext = load_inline(name="redteam_nondet_sum", cpp_sources=_CPP,
                   functions=["sum_dim_dither", "sum_dim_uninit"], extra_cflags=["-O3"], verbose=False)
# --- end of shared extension


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_dim_uninit(x, self.dim)
