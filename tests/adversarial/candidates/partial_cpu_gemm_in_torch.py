"""Level-2-style partial candidate (how most published level-2 solutions are written): the GEMM
stays in torch (``x @ W^T``), bias + ReLU are fused in its own C++ kernel. Task: gemm_bias_relu.
Expected: rejected custom_code.torch_compute under --rules strict, valid under --rules partial."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

torch::Tensor bias_relu(torch::Tensor y, torch::Tensor b) {
    TORCH_CHECK(y.dim() == 2 && b.dim() == 1 && y.size(1) == b.size(0), "bias_relu: shapes");
    auto yc = y.contiguous();
    auto bc = b.contiguous();
    auto out = torch::empty_like(yc);
    const int64_t R = yc.size(0), C = yc.size(1);
    const float* Y = yc.data_ptr<float>();
    const float* B = bc.data_ptr<float>();
    float* O = out.data_ptr<float>();
    for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < C; ++c) {
            const float v = Y[r * C + c] + B[c];
            O[r * C + c] = v < 0.f ? 0.f : v;
        }
    return out;
}
"""

_ext = load_inline(name="partial_cpu_bias_relu", cpp_sources=_CPP, functions=["bias_relu"],
                   extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_f: int, out_f: int):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)  # parameters only

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.linear.weight.t())  # the GEMM, in torch
        return _ext.bias_relu(y, self.linear.bias)  # bias + ReLU, its own kernel
