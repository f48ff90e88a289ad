"""Cheat #2 (calling the reference). Re-declares the reference Model and subclasses it: ModelNew
is the PyTorch reference under another name. No custom code at all.
Task: matmul. Expected: rejected custom_code.torch_compute."""

import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


class ModelNew(Model):
    """Optimized: cuBLAS/MKL is already optimal for this shape."""
