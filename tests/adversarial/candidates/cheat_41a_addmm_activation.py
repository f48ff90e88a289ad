"""Issue 25 class 4a (the partial rule set gamed). torch computes the whole reference
(``torch._addmm_activation``: GEMM + bias + ReLU in one op, family "matmul"), so the reference's
ReLU looked replaced; a do-nothing kernel of its own (the no-op extension of
partial_cpu_all_torch_noop, byte-identical: one build) is called beside it so that "own code ran".
Valid under partial on the old code. Task: gemm_bias_relu. Expected under --rules partial:
rejected custom_code.no_replacement (nested and fused ops count: _addmm_activation computes matmul,
add and relu)."""

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
        self.linear = nn.Linear(in_f, out_f)  # parameters only

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch._addmm_activation(self.linear.bias, x, self.linear.weight.t())
        return _ext.touch(y)
