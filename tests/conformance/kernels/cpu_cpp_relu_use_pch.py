"""load_inline C++ on CPU, asking for torch's precompiled header itself (use_pch=True) with its
own extra_cflags. Task: relu. Expected: valid under both rule sets (use_pch is a build-speed
option: it must never decide a verdict)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

torch::Tensor relu_pch(torch::Tensor x) {
    TORCH_CHECK(x.is_cpu() && x.scalar_type() == torch::kFloat32, "float32 CPU tensor expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* s = xc.data_ptr<float>();
    float* d = out.data_ptr<float>();
    const int64_t n = xc.numel();
    for (int64_t i = 0; i < n; ++i) d[i] = s[i] > 0.f ? s[i] : 0.f;
    return out;
}
"""

_ext = load_inline(name="conf_relu_use_pch", cpp_sources=_SRC, functions=["relu_pch"],
                   extra_cflags=["-O2"], use_pch=True, verbose=False)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_pch(x)
