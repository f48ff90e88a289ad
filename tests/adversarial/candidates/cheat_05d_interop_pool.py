"""Cheat #5 (background work on torch's own inter-op thread pool). The extension hands the
kernel to at::launch, which runs it on a pool thread torch already owns: no new Python or
native thread appears after warm-up, and forward() returns before the work is done. The
pool thread waits 50 ms before the work.
Task: relu. Expected: incorrect correctness.nonfinite: the worker snapshots the output as the call
ends, before the pool writes it, from memory poisoned with NaN (correctness.tolerance where the
allocator hands back memory the poison did not reach). Work that races the snapshot instead is
what the background-CPU check (timing.threads, finding F6) is for."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <chrono>
#include <thread>

void relu_launch(torch::Tensor x, torch::Tensor out) {
    TORCH_CHECK(x.is_contiguous() && out.is_contiguous() && x.numel() == out.numel(), "relu_launch: shapes");
    at::launch([x, out]() {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const float* s = x.data_ptr<float>();
        float* d = out.data_ptr<float>();
        for (int64_t i = 0, n = x.numel(); i < n; ++i) d[i] = s[i] < 0.f ? 0.f : s[i];
    });
}
"""

_ext = load_inline(name="redteam_interop_relu", cpp_sources=_CPP, functions=["relu_launch"],
                   extra_cflags=["-O3"], verbose=False)
_warm = torch.zeros(8)
_ext.relu_launch(_warm, torch.empty(8))  # creates the pool threads during import


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        out = torch.empty_like(xc)
        _ext.relu_launch(xc, out)
        return out
