"""Issue 25 class 4a (the partial rule set gamed): "own code ran" satisfied by an extension that
is loaded and never called (the no-op extension of partial_cpu_all_torch_noop, byte-identical: one
build). torch runs the GEMM and the bias; the ReLU is done in Python on lists (no torch op, no
kernel). Task: gemm_bias_relu. Expected under --rules partial: rejected
custom_code.no_custom_kernel (no function of the candidate's extension is called inside forward)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor touch(torch::Tensor y) {
    return y;  // does nothing
}
"""

_ext = load_inline(name="partial_cpu_noop", cpp_sources=_CPP, functions=["touch"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_f: int, out_f: int):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)
        self.unused = _ext  # loaded, never called

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        rows = [[v if v > 0.0 else 0.0 for v in r] for r in y.tolist()]
        return torch.tensor(rows, dtype=y.dtype)
