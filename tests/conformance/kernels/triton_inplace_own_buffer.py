"""In-place Triton kernel on a buffer it owns: copy the input, then ReLU the copy in place.
Task: relu. Expected: valid under both rule sets (the copy is torch, the compute is its own)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_inplace(p, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p + offs, tl.maximum(tl.load(p + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.contiguous().clone()
        n = y.numel()
        _relu_inplace[(triton.cdiv(n, 1024),)](y, n, BLOCK=1024)
        return y
