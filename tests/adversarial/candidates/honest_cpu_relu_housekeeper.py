"""Honest CPU candidate with a housekeeping thread: a C++ ReLU, plus a native thread started at
import that wakes every 250 ms and spins for 2 ms, touching nothing of the judge's (as a
library's config poller or a logger does; torch's own kineto thread wakes every 5 s).
Task: relu. Expected: valid. Some of its wakes land between a call's end and the check of that
call's output; those windows are over the allowance, but they are a small share of the windows,
which is what tells this apart from an output rewritten after every call (#36)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# the relu repeats honest_cpu_relu.py's on purpose: a candidate is one self-contained source
_CPP = r"""
#include <torch/extension.h>
#include <chrono>
#include <thread>

static void housekeeping() {
    using clock = std::chrono::steady_clock;
    volatile unsigned long sink = 0;
    for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        auto until = clock::now() + std::chrono::milliseconds(2);
        while (clock::now() < until) sink = sink + 1;
    }
}

void start() { std::thread(housekeeping).detach(); }

torch::Tensor relu_fwd(torch::Tensor x) {
    TORCH_CHECK(x.device().is_cpu() && x.scalar_type() == torch::kFloat32, "relu_fwd: float32 CPU tensor expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) {
        const float v = src[i];
        dst[i] = v < 0.f ? 0.f : v;
    }
    return out;
}
"""

_ext = load_inline(name="honest_cpu_relu_housekeeper", cpp_sources=_CPP, functions=["start", "relu_fwd"],
                   extra_cflags=["-O3"], verbose=False)
_ext.start()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_fwd(x)
