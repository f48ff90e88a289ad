"""Grouped 3x3 convolution, 8 groups, padding 1."""

import torch
import torch.nn as nn

BATCH = 32
CIN = 128
COUT = 256
H = 64
W = 64
KS = 3
GROUPS = 8

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*H*W*(CIN//GROUPS)*KS*KS",
    "bytes": "4*(BATCH*CIN*H*W+COUT*(CIN//GROUPS)*KS*KS+COUT+BATCH*COUT*H*W)",
    "description": "Grouped 3x3 convolution, 8 groups, padding 1.",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 16, "COUT": 16, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 3, "CIN": 16, "COUT": 16, "H": 7, "W": 9}],
    "extra": [{"BATCH": 29, "CIN": 128, "COUT": 256, "H": 61, "W": 67}],
}


class Model(nn.Module):
    """nn.Conv2d(cin, cout, 3, padding=1, groups=8)."""

    def __init__(self, cin: int, cout: int, ks: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, ks, padding=ks // 2, groups=groups)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT, KS, GROUPS]
