"""Local response normalisation across 5 neighbouring channels."""

import torch
import torch.nn as nn

BATCH = 32
CH = 64
H = 112
W = 112

META = {
    "category": "normalization",
    "dtype": "float32",
    "flops": "15*BATCH*CH*H*W",
    "bytes": "4*2*BATCH*CH*H*W",
    "description": "Local response normalisation across 5 neighbouring channels.",
}

SHAPES = {
    "small": {"BATCH": 4, "CH": 8, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 3, "CH": 8, "H": 7, "W": 5}],
    "extra": [{"BATCH": 19, "CH": 64, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """nn.LocalResponseNorm(size=5)."""

    def __init__(self):
        super().__init__()
        self.lrn = nn.LocalResponseNorm(size=5, alpha=1e-2, beta=0.75, k=1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lrn(x)


def get_inputs():
    x = torch.randn(BATCH, CH, H, W) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return []
