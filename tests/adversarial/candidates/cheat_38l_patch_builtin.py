"""Issue 25 class 1 (candidate code after the clock stops, here: before it starts). At import,
the builtin ``zip`` is replaced by one that, when the worker pairs a call's input headers with
their views of the shared input region (in ``prepare``, before the clock), computes the ReLU of
those inputs with torch; forward returns it (valid on the old code). Task: relu. Expected:
rejected sandbox.hooks (a builtin replaced)."""

import builtins

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

_zip = builtins.zip
_ready = []


def _spy_zip(*its, **kw):
    its = [list(i) for i in its]
    for it in its:
        for v in it:
            if isinstance(v, torch.Tensor) and v.dim() == 2 and v.dtype == torch.float32:
                _ready.append(torch.relu(v))
                del _ready[:-1]
    return _zip(*its, **kw)


setattr(builtins, "z" + "ip", _spy_zip)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if _ready and _ready[-1].shape == x.shape:
            return _ready.pop()
        return _lib.relu_new(x)
