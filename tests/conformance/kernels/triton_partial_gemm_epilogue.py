"""Level-2 partial solution on the GPU: the GEMM stays in torch (cuBLAS), bias + ReLU are one
fused Triton epilogue. Task: gemm_bias_relu. Expected: rejected custom_code.torch_compute
(strict), valid (partial, with custom_share reported)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_relu(y_ptr, b_ptr, o_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask) + tl.load(b_ptr + offs % cols, mask=mask)
    tl.store(o_ptr + offs, tl.maximum(v, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_f: int, out_f: int):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.linear.weight.t()).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        _bias_relu[(triton.cdiv(n, 1024),)](y, self.linear.bias, out, n, y.shape[1], BLOCK=1024)
        return out
