"""load_inline C++ on CPU with extra_include_paths (torch's own ATen include dir, as kernels that
include ATen/cpu or CUTLASS headers do). Task: relu. Expected: valid under both rule sets."""

import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_ATEN = os.path.join(os.path.dirname(torch.__file__), "include", "ATen")

_SRC = r"""
#include <torch/extension.h>
#include <Parallel.h>  // found through extra_include_paths (torch/include/ATen)

torch::Tensor relu_inc(torch::Tensor x) {
    TORCH_CHECK(x.is_cpu() && x.scalar_type() == torch::kFloat32, "float32 CPU tensor expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* s = xc.data_ptr<float>();
    float* d = out.data_ptr<float>();
    at::parallel_for(0, xc.numel(), 4096, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) d[i] = s[i] > 0.f ? s[i] : 0.f;
    });
    return out;
}
"""

_ext = load_inline(name="conf_relu_include_paths", cpp_sources=_SRC, functions=["relu_inc"],
                   extra_include_paths=[_ATEN], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_inc(x)
