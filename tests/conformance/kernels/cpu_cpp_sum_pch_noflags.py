"""load_inline C++ on CPU with use_pch=True and no other flags (the only case where torch's
precompiled header can match; with the compile cut on, the harness asks for it too).
Task: sum_dim. Expected: valid under both rule sets, with or without the cut."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

torch::Tensor sum_mid(torch::Tensor x) {  // sum over dim 1 of a (B, R, C) float32 tensor
    TORCH_CHECK(x.is_cpu() && x.dim() == 3 && x.scalar_type() == torch::kFloat32, "(B, R, C) float32");
    auto xc = x.contiguous();
    const int64_t B = xc.size(0), R = xc.size(1), C = xc.size(2);
    auto out = torch::empty({B, C}, xc.options());
    const float* s = xc.data_ptr<float>();
    float* d = out.data_ptr<float>();
    for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c) {
            double acc = 0.0;
            for (int64_t r = 0; r < R; ++r) acc += s[(b * R + r) * C + c];
            d[b * C + c] = static_cast<float>(acc);
        }
    return out;
}
"""

_ext = load_inline(name="conf_sum_pch", cpp_sources=_SRC, functions=["sum_mid"], use_pch=True)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_mid(x)
