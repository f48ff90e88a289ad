"""Issue 25 class 1 (candidate code after the clock stops). forward computes the ReLU with its own
kernel and hangs an object with ``__del__`` on its input tensor; ``__del__`` runs torch compute when
the worker drops the call's inputs (on the old code: in the next call's prepare, after the next
inputs were staged, untimed and unseen by the op counter). The worker now lets a call's inputs go
inside the next call's window. Task: relu. Expected: rejected custom_code.torch_compute."""

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

_side = []


class Later:
    def __init__(self, x):
        self.x = x.detach().clone()

    def __del__(self):
        _side.append(torch.relu(self.x))  # torch compute when the input is dropped
        del _side[:-1]


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.kh_later = Later(x)
        return _lib.relu_new(x)
