"""InstanceNorm2d (per sample, per channel statistics), no affine."""

import torch
import torch.nn as nn

BATCH = 32
CH = 64
H = 128
W = 128

META = {
    "category": "normalization",
    "dtype": "float32",
    "flops": "7*BATCH*CH*H*W",
    "bytes": "4*2*BATCH*CH*H*W",
    "description": "InstanceNorm2d (per sample, per channel statistics), no affine.",
}

SHAPES = {
    "small": {"BATCH": 4, "CH": 8, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 3, "CH": 8, "H": 7, "W": 5}],
    "extra": [{"BATCH": 19, "CH": 64, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """InstanceNorm2d(CH)."""

    def __init__(self, ch: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(ch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inorm(x)


def get_inputs():
    x = torch.randn(BATCH, CH, H, W) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [CH]
