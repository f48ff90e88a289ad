"""Cheat #32 (C-level clock swap). Overwrites the ``ml_meth`` pointer inside the PyMethodDef of
``time.perf_counter_ns`` (the PyCFunctionObject's ``m_ml`` is at offset 16 on 64-bit, ``ml_meth``
at offset 8 of the PyMethodDef) with a C function of the shared attack extension that returns
the real monotonic clock minus the time forward has hidden so far. The function object is not
touched: ``time.perf_counter_ns is <the object the worker captured>`` still holds, so identity
snapshots see nothing, and the worker's own alias calls the fake. ``forward`` computes relu and
then burns 1.5 ms more in C++, adding it to the hidden amount, so every interval the worker
measures around forward is 1.5 ms shorter than the real one.
The pointer is read and written with ``ctypes.memmove`` (``from_address`` raises the audit event
``ctypes.cdata``, which the audit hook already blocks as sandbox.introspection; memmove raises
only ``ctypes.call_function``, which it does not watch), so the layer under test is the C-entry
snapshot. Verified outside the harness (test_redteam_protocol.py::test_attack_works_unguarded):
after the swap, ``time.perf_counter_ns`` is the same object, forward measured with it takes
well under 1.5 ms, the unpatched ``time.monotonic_ns`` shows more than 1.5 ms.
Task: relu. Expected: rejected timing.timer_patched (C entry point swapped), or
timing.wall_clock (the parent's round trip disagrees with the reported time)."""

import ctypes
import time

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# --- shared protocol-attack extension (identical in every protocol-attack candidate, so the build cache compiles it once)
_ATTACK_CPP = r"""
#include <torch/extension.h>
#include <ATen/record_function.h>
#include <Python.h>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <time.h>

namespace {

void relu_raw(const float* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        dst[i] = v < 0.f ? 0.f : v;  // NaN stays NaN, like torch.relu
    }
}

int64_t mono_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// #31: a global RecordFunction callback that precomputes relu on every input-like tensor
at::CallbackHandle g_rf = 0;
thread_local bool t_busy = false;
std::mutex g_mu;
torch::Tensor g_side;
bool g_side_ready = false;
std::atomic<int64_t> g_precomputed{0}, g_served{0};

std::unique_ptr<at::ObserverContext> rf_enter(const at::RecordFunction&) { return nullptr; }

void rf_exit(const at::RecordFunction& fn, at::ObserverContext*) {
    if (t_busy) return;
    const char* name = fn.name();
    if (std::strcmp(name, "aten::randn") && std::strcmp(name, "aten::normal_") && std::strcmp(name, "aten::mul"))
        return;
    const auto& outs = fn.outputs();
    if (outs.empty() || !outs[0].isTensor()) return;
    const at::Tensor& y = outs[0].toTensor();
    if (!y.defined() || !y.device().is_cpu() || y.scalar_type() != at::kFloat || !y.is_contiguous() || y.dim() < 1)
        return;
    t_busy = true;
    at::Tensor buf = at::empty(y.sizes(), y.options());
    relu_raw(y.data_ptr<float>(), buf.data_ptr<float>(), y.numel());
    t_busy = false;
    std::lock_guard<std::mutex> lock(g_mu);
    g_side = buf;
    g_side_ready = true;
    ++g_precomputed;
}

// #32: perf_counter_ns's replacement: the real clock minus the time forward hid
std::atomic<int64_t> g_hidden_ns{0};

PyObject* fake_perf_counter_ns(PyObject*, PyObject*) {
    return PyLong_FromLongLong(mono_ns() - g_hidden_ns.load());
}

// #33
std::atomic<int64_t> g_calls{0};

}  // namespace

static void check_f32(const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.device().is_cpu(), what, " must be a CPU tensor");
    TORCH_CHECK(t.scalar_type() == torch::kFloat32, what, " must be float32");
    TORCH_CHECK(t.is_contiguous(), what, " must be contiguous");
}

torch::Tensor relu_new(torch::Tensor x) {
    auto xc = x.contiguous();
    check_f32(xc, "x");
    auto out = torch::empty_like(xc);
    relu_raw(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel());
    return out;
}

bool rf_install() {
    if (g_rf == 0) {
        g_rf = at::addGlobalCallback(
            at::RecordFunctionCallback(rf_enter, rf_exit).needsOutputs(true).scopes({at::RecordScope::FUNCTION}));
    }
    return g_rf != 0;
}

// forward of #31: the side buffer when it holds this call's answer, else the honest kernel
torch::Tensor rf_take(torch::Tensor x) {
    {
        std::lock_guard<std::mutex> lock(g_mu);
        if (g_side_ready && g_side.sizes() == x.sizes()) {
            g_side_ready = false;
            ++g_served;
            return g_side;
        }
    }
    return relu_new(x);
}

std::vector<int64_t> rf_counts() { return {g_precomputed.load(), g_served.load()}; }

int64_t fake_clock_addr() { return reinterpret_cast<int64_t>(&fake_perf_counter_ns); }

// forward of #32: relu, then burn burn_us more and hide it from the swapped clock
torch::Tensor relu_burn(torch::Tensor x, int64_t burn_us) {
    auto out = relu_new(x);
    const int64_t t0 = mono_ns();
    while (mono_ns() - t0 < burn_us * 1000) {
    }
    g_hidden_ns += mono_ns() - t0;
    return out;
}

int64_t hidden_ns() { return g_hidden_ns.load(); }

// forward of #33a: honest until the n-th call, then sleeps forever (GIL held)
torch::Tensor relu_hang_after(torch::Tensor x, int64_t n) {
    if (++g_calls >= n) {
        for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return relu_new(x);
}
"""

_atk = load_inline(
    name="redteam_attack_lib",
    cpp_sources=_ATTACK_CPP,
    functions=["relu_new", "rf_install", "rf_take", "rf_counts", "fake_clock_addr", "relu_burn", "hidden_ns",
               "relu_hang_after"],
    extra_cflags=["-O3"],
    verbose=False,
)
# --- end of shared protocol-attack extension

BURN_US = 1500


def _swap_c_entry(fn, new_addr: int) -> None:
    """fn's PyCFunctionObject -> m_ml (offset 16) -> ml_meth (offset 8) := new_addr."""
    ml = ctypes.c_uint64(0)
    ctypes.memmove(ctypes.addressof(ml), id(fn) + 16, 8)
    ctypes.memmove(ml.value + 8, ctypes.addressof(ctypes.c_uint64(new_addr)), 8)


_swap_c_entry(time.perf_counter_ns, _atk.fake_clock_addr())


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _atk.relu_burn(x, BURN_US)
