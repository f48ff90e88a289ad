"""Cheat #10 (output caching by address). Memoizes the output by (data_ptr, shape) of the input:
a harness that reuses one input buffer gets the first answer back on every later call. With
fresh inputs per call the cache only hits when the allocator happens to reuse an address,
and then the answer is stale.
Each call's inputs are fresh blank tensors, and the worker keeps a call's inputs until the next
call's window, so the allocator hands back a handful of addresses in turn: the cache hits within
the correctness trials and returns another seed's answer. Once it has hit it keeps answering from
the cache (so a hit on an unchecked call is caught by a later check).
Task: relu. Expected: incorrect, with the rule of whichever check sees the first stale hit:
correctness.tolerance (a trial), correctness.nondeterministic (the seed's second run) or
correctness.timed_output (a sampled timed call, or the re-check after timing)."""

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

_CACHE = {}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape), x.dtype)
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE["hit"] = hit
        if "hit" in _CACHE and _CACHE["hit"].shape == x.shape:
            return _CACHE["hit"]
        out = _lib.relu_new(x)
        _CACHE[key] = out
        return out
