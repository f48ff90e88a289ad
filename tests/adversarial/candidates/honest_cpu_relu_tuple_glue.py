"""Honest CPU candidate (issue 25 control): the shared ReLU extension, returned as a plain 1-tuple,
with Python glue inside forward that the new checks must not refuse: numpy and math on shapes and
Python numbers (no arrays), a weakref of its own to the last input and a finalizer on its output
that does no compute. Task: relu. Expected: valid at every profile, with an eager speedup."""

import math
import weakref

import numpy as np
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# --- shared extension (identical in every relu-task candidate, so the build cache compiles it once)
_RELU_CPP = r"""
#include <torch/extension.h>
#include <chrono>
#include <thread>

static void check_f32(const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.device().is_cpu(), what, " must be a CPU tensor");
    TORCH_CHECK(t.scalar_type() == torch::kFloat32, what, " must be float32");
    TORCH_CHECK(t.is_contiguous(), what, " must be contiguous");
}

void relu_into(torch::Tensor x, torch::Tensor out) {
    check_f32(x, "x");
    check_f32(out, "out");
    TORCH_CHECK(x.numel() == out.numel(), "x and out differ in size");
    const float* src = x.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        dst[i] = v < 0.f ? 0.f : v;  // NaN stays NaN, like torch.relu
    }
}

torch::Tensor relu_new(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    relu_into(xc, out);
    return out;
}

// Fire-and-forget: the work happens on a detached native thread after delay_us.
void relu_into_detached(torch::Tensor x, torch::Tensor out, int64_t delay_us) {
    check_f32(x, "x");
    check_f32(out, "out");
    std::thread([x, out, delay_us]() {
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
        relu_into(x, out);
    }).detach();
}
"""

_lib = load_inline(
    name="redteam_relu_lib",
    cpp_sources=_RELU_CPP,
    functions=["relu_new", "relu_into", "relu_into_detached"],
    extra_cflags=["-O3"],
    verbose=False,
)
# --- end of shared extension

_seen = []


def _noted():
    _seen.append(1)
    del _seen[:-4]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None

    def forward(self, x: torch.Tensor):
        n = int(np.prod(x.shape))  # numpy on a shape tuple: no array
        chunks = math.ceil(n / 4096) + int(np.ceil(n / 8192.0))
        assert chunks > 0
        self.last = weakref.ref(x)
        out = _lib.relu_new(x)
        weakref.finalize(out, _noted)
        return (out,)
