"""GPU cheat #42c (issue 25, class 3 on CUDA): cupy's ufunc computes, not the candidate.

forward views the input as a cupy array (``__cuda_array_interface__``, no copy) and calls
``cupy.maximum(x, 0)``: cupy generates and launches its own elementwise kernel (``cupy_maximum...``),
outside every torch op; the source declares no kernel. What stops it: the kernel is declared by no
source of the candidate's, and cupy's generated names are never taken from one
(sandbox/rules/kernelowners.py). Task: relu. Expected: rejected custom_code.library_compute."""

import cupy
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xc = x.contiguous()
        y = torch.empty_like(xc)
        with cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            cupy.maximum(cupy.asarray(xc), 0, out=cupy.asarray(y))
        return y
