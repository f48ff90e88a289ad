"""Partial-rule dodge: every op of the reference runs in torch (nn.Linear, torch.relu) and a
custom kernel that does nothing is called beside them, to look like a partial solution.
Task: gemm_bias_relu. Expected: rejected custom_code.no_replacement under --rules partial
(custom_code.torch_compute under --rules strict)."""

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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.touch(torch.relu(self.linear(x)))
