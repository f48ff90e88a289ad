"""Pointwise (1x1) convolution: a per-pixel channel mix."""

import torch
import torch.nn as nn

BATCH = 32
CIN = 256
COUT = 128
H = 64
W = 64

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*H*W*CIN",
    "bytes": "4*(BATCH*CIN*H*W+COUT*CIN+COUT+BATCH*COUT*H*W)",
    "description": "Pointwise (1x1) convolution: a per-pixel channel mix.",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 8, "COUT": 4, "H": 12, "W": 12},
    "small_extra": [{"BATCH": 3, "CIN": 8, "COUT": 4, "H": 11, "W": 9}],
    "extra": [{"BATCH": 29, "CIN": 256, "COUT": 128, "H": 61, "W": 67}],
}


class Model(nn.Module):
    """nn.Conv2d(cin, cout, 1)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
