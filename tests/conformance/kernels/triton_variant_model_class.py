"""Triton kernel in a class named Model (no ModelNew), forward(self, x, scale=1.0).
Task: relu. Expected: valid under both rule sets, with accommodations noted."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_scaled(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0) * scale, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _relu_scaled[(triton.cdiv(n, 2048),)](x, y, n, scale, BLOCK=2048)
        return y
