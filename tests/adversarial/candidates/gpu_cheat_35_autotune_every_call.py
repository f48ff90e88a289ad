"""Cheat #35 (a GPU hog, not a wrong answer): a Triton relu whose autotuner is keyed on a value
that changes every call (the input's address mixed with a call counter), over 24 configs, so
every call re-benchmarks all of them (~3 s of GPU per call at Triton's default bench times).
Judged naively it holds the GPU until the whole evaluation's wall limit and blocks every
judgement queued behind it. The per-call deadline (max(2 s, 50x the reference's call)) ends it
within seconds after the warm-up; the judgement holds the GPU no longer than its bound.
Task: relu. Expected: timeout sandbox.timeout."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
            for w in (2, 4, 8)]


@triton.autotune(configs=_CONFIGS, key=["tick"])
@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, tick, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0, 0.0, x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        out = torch.empty_like(xc)
        n = xc.numel()
        self.calls += 1
        tick = (xc.data_ptr() >> 8) * 1000003 + self.calls
        _relu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](xc, out, n, tick)
        return out
