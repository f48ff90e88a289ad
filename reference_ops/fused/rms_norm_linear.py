"""RMSNorm then a linear projection (pre-norm transformer input)."""

import torch
import torch.nn as nn

TOKENS = 4096
DIM = 4096
OUT = 4096

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*TOKENS*DIM*OUT+4*TOKENS*DIM",
    "bytes": "4*(TOKENS*DIM+DIM+DIM*OUT+TOKENS*OUT)",
    "description": "RMSNorm then a linear projection (pre-norm transformer input).",
}

SHAPES = {
    "small": {"TOKENS": 16, "DIM": 64, "OUT": 48},
    "small_extra": [{"TOKENS": 7, "DIM": 37, "OUT": 29}],
    "extra": [{"TOKENS": 3001, "DIM": 4096, "OUT": 2047}],
}


class Model(nn.Module):
    """linear(x / sqrt(mean(x^2) + eps) * weight)."""

    def __init__(self, dim: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))
        self.linear = nn.Linear(dim, out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * self.weight
        return self.linear(x)


def get_inputs():
    x = torch.randn(TOKENS, DIM) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [DIM, OUT]
