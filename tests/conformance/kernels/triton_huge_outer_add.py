"""Triton kernel with a huge output (2 GiB per call) from two small vectors.
Task: outer_add_huge. Expected: valid under both rule sets."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _outer_add(a_ptr, b_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    a = tl.load(a_ptr + rm, mask=rm < M)
    b = tl.load(b_ptr + rn, mask=rn < N)
    offs = rm[:, None].to(tl.int64) * N + rn[None, :]
    tl.store(o_ptr + offs, a[:, None] + b[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, N = a.numel(), b.numel()
        out = torch.empty((M, N), device=a.device, dtype=a.dtype)
        _outer_add[(triton.cdiv(M, 32), triton.cdiv(N, 256))](a, b, out, M, N, BM=32, BN=256)
        return out
