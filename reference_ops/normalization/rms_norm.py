"""RMSNorm over the last dimension: x / sqrt(mean(x^2) + eps) * weight."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

META = {
    "category": "normalization",
    "dtype": "float32",
    "flops": "4*BATCH*DIM",
    "bytes": "4*(2*BATCH*DIM+DIM)",
    "description": "RMSNorm over the last dimension: x / sqrt(mean(x^2) + eps) * weight.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}],
}


class Model(nn.Module):
    """RMSNorm with a learnable weight."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    # offset and scale so that normalising actually changes the values
    x = torch.randn(BATCH, DIM) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [DIM]
