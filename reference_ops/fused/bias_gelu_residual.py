"""Elementwise chain: gelu(x + bias) + residual (bias broadcast over rows)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 8192

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "10*BATCH*DIM",
    "bytes": "4*(3*BATCH*DIM+DIM)",
    "description": "Elementwise chain: gelu(x + bias) + residual (bias broadcast over rows).",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}],
}


class Model(nn.Module):
    """gelu(x + bias) + residual with a learned bias of size DIM."""

    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim) * 0.5)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return F.gelu(x + self.bias) + residual


def get_inputs():
    x = torch.randn(BATCH, DIM) * 2.0
    residual = torch.randn(BATCH, DIM)
    return [x, residual]


def get_init_inputs():
    return [DIM]
