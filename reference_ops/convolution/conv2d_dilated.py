"""2D convolution, 3x3 kernel, dilation 2, padding 2 (same size output)."""

import torch
import torch.nn as nn

BATCH = 16
CIN = 64
COUT = 64
H = 128
W = 128
KS = 3

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*H*W*CIN*KS*KS",
    "bytes": "4*(BATCH*CIN*H*W+COUT*CIN*KS*KS+COUT+BATCH*COUT*H*W)",
    "description": "2D convolution, 3x3 kernel, dilation 2, padding 2 (same size output).",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 4, "COUT": 8, "H": 12, "W": 12},
    "small_extra": [{"BATCH": 3, "CIN": 4, "COUT": 8, "H": 11, "W": 9}],
    "extra": [{"BATCH": 13, "CIN": 64, "COUT": 64, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """nn.Conv2d(cin, cout, 3, padding=2, dilation=2)."""

    def __init__(self, cin: int, cout: int, ks: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, ks, padding=2, dilation=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT, KS]
