"""Adaptive average pooling of (H, W) maps to 7x7 (uneven windows at odd sizes)."""

import torch
import torch.nn as nn

BATCH = 32
CH = 64
H = 128
W = 128

META = {
    "category": "pooling",
    "dtype": "float32",
    "flops": "BATCH*CH*H*W",
    "bytes": "4*(BATCH*CH*H*W+BATCH*CH*49)",
    "description": "Adaptive average pooling of (H, W) maps to 7x7 (uneven windows at odd sizes).",
}

SHAPES = {
    "small": {"BATCH": 2, "CH": 4, "H": 12, "W": 12},
    "small_extra": [{"BATCH": 3, "CH": 5, "H": 11, "W": 9}],
    "extra": [{"BATCH": 29, "CH": 67, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """nn.AdaptiveAvgPool2d((7, 7))."""

    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((7, 7))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(BATCH, CH, H, W)
    return [x]


def get_init_inputs():
    return []
