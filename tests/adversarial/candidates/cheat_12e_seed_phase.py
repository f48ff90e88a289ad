"""Cheat #12 (phase detection from the RNG seed). The judge seeds torch before generating each
call's inputs, so torch.initial_seed() tells the candidate which call this is: correctness
trials use seeds close to the first one it saw, timed calls jump far ahead. It computes
honestly near the first seed and returns its previous output on the far-away (timed) ones.
Neutralised since issue 14 item 1: no call's seed reaches the candidate's process (the reference
worker makes the inputs), so torch.initial_seed() never moves. Once its tell fires it stays in
"timed" mode, so the final re-check after timing would catch it (a valid verdict proves it never
fired). Task: relu. Expected: valid."""

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

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = None
        self.last = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seed = torch.initial_seed()
        if self.first is None:
            self.first = seed
        self.far = getattr(self, "far", False) or abs(seed - self.first) > 100_000  # sticky once it fires
        if self.far and self.last is not None and self.last.shape == x.shape:
            return self.last
        self.last = _lib.relu_new(x)
        return self.last
