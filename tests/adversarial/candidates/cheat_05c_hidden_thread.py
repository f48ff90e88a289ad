"""Cheat #5 (background thread, obfuscated). Starts a low-level thread through an import built
from string pieces, so a scan for 'threading' finds nothing and threading.enumerate() does not
list it.
The thread waits 50 ms, then fills the output.
Task: relu. Expected: incorrect correctness.nonfinite: the output is snapshotted as the call ends,
before the thread writes it, from memory the judge poisoned with NaN (correctness.tolerance where
the allocator hands back memory the poison did not reach)."""

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

_spawn = getattr(__import__("_th" + "read"), "start_new_" + "thread")
_pause = getattr(__import__("ti" + "me"), "sl" + "eep")


def _late(x, out):
    _pause(0.05)
    _lib.relu_into(x, out)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        _spawn(_late, (x.contiguous(), out))
        return out
