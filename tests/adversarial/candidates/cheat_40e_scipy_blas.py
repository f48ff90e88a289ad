"""Issue 25 class 3c (a library's compute passed off as the candidate's own): scipy's BLAS
``sgemm`` on numpy views of the inputs, the result copied into a torch tensor.
Task: matmul. Expected: rejected custom_code.library_compute."""

import importlib

import torch
import torch.nn as nn

_blas = importlib.import_module("scipy.linalg." + "blas")


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        c = _blas.sgemm(1.0, a.numpy(), b.numpy())
        return torch.as_tensor(c)
