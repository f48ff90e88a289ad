"""Probe #38 (several GPUs): a candidate judged on one GPU of a machine with several must see
that GPU alone, as cuda:0; otherwise it could launch work on, or read the memory of, the GPU
where another candidate's judgement is being timed (sandbox/session.one_gpu_view). This one
refuses to run when it sees more than one GPU, or when its inputs are not on the current
device (code written for 'cuda' would then run on the wrong GPU), and is an honest Triton
ReLU otherwise. Task: relu. Expected: valid, on any number of GPUs."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0, 0.0, x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        n = torch.cuda.device_count()
        if n != 1:
            raise RuntimeError(f"this candidate sees {n} GPUs; a judging worker must see one")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.device != torch.device("cuda", torch.cuda.current_device()):
            raise RuntimeError(f"input on {x.device}, current device cuda:{torch.cuda.current_device()}")
        xc = x.contiguous()
        out = torch.empty_like(xc)
        n = xc.numel()
        _relu_kernel[(triton.cdiv(n, 1024),)](xc, out, n, BLOCK=1024)
        return out
