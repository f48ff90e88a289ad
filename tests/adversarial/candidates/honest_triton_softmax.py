"""Honest GPU candidate (Triton): row softmax, one program per row, the whole row in one block
(next power of two of the row length), max-subtracted.
Task: softmax. Expected: valid at every profile. (Not run on a GPU here.)"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    e = tl.where(mask, e, 0.0)
    tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        cols = xc.shape[-1]
        rows = xc.numel() // cols
        out = torch.empty_like(xc)
        block = triton.next_power_of_2(cols)
        warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
        _softmax_kernel[(rows,)](xc, out, cols, cols, BLOCK=block, num_warps=warps)
        return out
