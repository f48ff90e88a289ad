"""Issue 25 class 2 (the counter can be switched off, from C++). A C++ extension runs torch's ReLU
inside ``at::DisableRecordFunctionGuard``: neither the op counter nor the profiler sees it.
Task: relu. Expected: rejected custom_code.counter_disabled (the link check: the extension needs
``at::enableRecordFunction``)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# --- shared record-function extension (identical in every class-2 native candidate: one build)
_RF_CPP = r"""
#include <torch/extension.h>
#include <ATen/record_function.h>

// torch's ReLU with RecordFunction off on this thread for the duration (the guard restores it)
torch::Tensor relu_unseen(torch::Tensor x) {
    at::DisableRecordFunctionGuard off;
    return at::relu(x);
}

// every RecordFunction callback removed (the op counter's too)
void clear_all() { at::clearCallbacks(); }
"""

_rf = load_inline(name="redteam_rf_lib", cpp_sources=_RF_CPP, functions=["relu_unseen", "clear_all"],
                  extra_cflags=["-O2"], verbose=False)
# --- end of shared record-function extension


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _rf.relu_unseen(x)
