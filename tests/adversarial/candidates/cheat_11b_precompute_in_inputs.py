"""Cheat #11 (moving the work out of the timed window). The judge generates each call's inputs
inside the candidate's process by calling the task module's get_inputs() just before it
starts the clock. The candidate wraps that function (found through sys.modules): the wrapper
runs the real one, computes the answer right away (untimed) and remembers it; forward() then
only returns the remembered tensor. Outputs are correct, the timed window is empty.
Neutralised since issue 14 item 1: the reference worker makes every call's inputs, the candidate's
worker never calls get_inputs, so the wrapper never runs. To show that, the wrapper's path leaves
a mark once it fires: every later output is NaN (a valid verdict proves it never fired).
Task: relu. Expected: valid (the kernel computes inside the timed window)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
import sys

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

_READY = {}
_SEEN = [0]
_FIRED = [False]


def _arm():
    if len(sys.modules) == _SEEN[0]:  # no new task module loaded since the last scan
        return
    _SEEN[0] = len(sys.modules)
    for mod in list(sys.modules.values()):
        gi = getattr(mod, "get_" + "inputs", None)
        if not callable(gi) or getattr(gi, "_armed", False) or not hasattr(mod, "Model"):
            continue

        def wrapped(_real=gi):
            inputs = _real()
            x = inputs[0]
            _READY[id(x)] = (x, _lib.relu_new(x))  # the work, done before the clock starts
            return inputs

        wrapped._armed = True
        setattr(mod, "get_" + "inputs", wrapped)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hit = _READY.pop(id(x), None)
        _arm()  # (re-)arm the task module the judge loaded for this profile
        if _FIRED[0]:
            return torch.full_like(x, float("nan"))  # the mark: the path fired before
        if hit is not None and hit[0] is x:
            _READY.clear()
            _FIRED[0] = True
            return hit[1]
        _READY.clear()
        return _lib.relu_new(x)
