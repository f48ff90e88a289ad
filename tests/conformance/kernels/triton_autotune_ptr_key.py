"""Triton @autotune keyed on a pointer argument (key=['x_ptr']), as published kernels do: the
tuning key holds the input tensor itself. Triton (3.6.0) cannot JSON-encode it when its disk cache
is on (TRITON_CACHE_AUTOTUNING=1, which the harness sets for candidate workers): the launch raised
TypeError and the kernel was judged runtime_error (issue 25). sandbox/build/tritonkeys.py tunes such a
kernel per process, as Triton does without the cache. Each call gets a new input tensor, so it
re-tunes its two configs every call (slow, but correct: the same as outside the harness).
Task: relu. Expected: valid under both rule sets."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 2048}, num_warps=8)],
    key=["x_ptr"],
)
@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _relu[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
        return y
