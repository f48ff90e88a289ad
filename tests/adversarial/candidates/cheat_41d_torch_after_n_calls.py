"""Issue 25 class 4b (the partial rule set gamed): an honest partial solution (torch's GEMM, its own
bias + ReLU kernel: the extension of partial_cpu_gemm_in_torch, byte-identical: one build) for its
first 12 calls (warm-up, correctness, the repeat, the profiled call); from then on, on every timed
call, ``torch._addmm_activation`` computes it all and its kernel only touches the result. Valid
under partial on the old code (the families matched the profiled call's). Task: gemm_bias_relu.
Expected under --rules partial: rejected custom_code.no_replacement (the timed calls are counted
and compared too)."""

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
        self.linear = nn.Linear(in_f, out_f)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        w, b = self.linear.weight, self.linear.bias
        if self.calls <= 12:
            return _ext.bias_relu(torch.matmul(x, w.t()), b)
        y = torch._addmm_activation(b, x, w.t())
        return _ext.bias_relu(y, torch.zeros_like(b))  # its kernel called, on torch's answer
