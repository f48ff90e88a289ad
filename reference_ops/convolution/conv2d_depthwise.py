"""Depthwise 3x3 convolution (groups = channels), padding 1."""

import torch
import torch.nn as nn

BATCH = 32
CH = 128
H = 128
W = 128
KS = 3

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*CH*H*W*KS*KS",
    "bytes": "4*(2*BATCH*CH*H*W+CH*KS*KS+CH)",
    "description": "Depthwise 3x3 convolution (groups = channels), padding 1.",
}

SHAPES = {
    "small": {"BATCH": 2, "CH": 8, "H": 12, "W": 12},
    "small_extra": [{"BATCH": 3, "CH": 8, "H": 11, "W": 9}],
    "extra": [{"BATCH": 29, "CH": 128, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """nn.Conv2d(ch, ch, 3, padding=1, groups=ch)."""

    def __init__(self, ch: int, ks: int):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, ks, padding=ks // 2, groups=ch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CH, H, W)
    return [x]


def get_init_inputs():
    return [CH, KS]
