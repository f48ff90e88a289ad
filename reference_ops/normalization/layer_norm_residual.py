"""Residual add then LayerNorm: LayerNorm(x + residual) (pre-norm transformer block pattern)."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

META = {
    "category": "normalization",
    "dtype": "float32",
    "flops": "9*BATCH*DIM",
    "bytes": "4*(3*BATCH*DIM+2*DIM)",
    "description": "Residual add then LayerNorm: LayerNorm(x + residual) (pre-norm transformer block pattern).",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}],
}


class Model(nn.Module):
    """LayerNorm(x + residual), affine."""

    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        with torch.no_grad():
            self.norm.weight.add_(0.1 * torch.randn(dim))
            self.norm.bias.add_(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(x + residual)


def get_inputs():
    x = torch.randn(BATCH, DIM) * 2.0 + 0.5
    residual = torch.randn(BATCH, DIM)
    return [x, residual]


def get_init_inputs():
    return [DIM]
