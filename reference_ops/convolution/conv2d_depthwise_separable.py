"""Depthwise-separable convolution: depthwise 3x3 (padding 1) followed by a pointwise 1x1."""

import torch
import torch.nn as nn

BATCH = 32
CIN = 64
COUT = 128
H = 128
W = 128

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*CIN*H*W*9+2*BATCH*COUT*H*W*CIN",
    "bytes": "4*(BATCH*CIN*H*W+BATCH*COUT*H*W+CIN*10+COUT*CIN+COUT)",
    "description": "Depthwise-separable convolution: depthwise 3x3 (padding 1) followed by a pointwise 1x1.",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 4, "COUT": 8, "H": 12, "W": 12},
    "small_extra": [{"BATCH": 3, "CIN": 4, "COUT": 8, "H": 11, "W": 9}],
    "extra": [{"BATCH": 29, "CIN": 64, "COUT": 128, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """Depthwise 3x3 then pointwise 1x1 (MobileNet block without norm/activation)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.depthwise = nn.Conv2d(cin, cin, 3, padding=1, groups=cin)
        self.pointwise = nn.Conv2d(cin, cout, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


def get_inputs():
    x = torch.randn(BATCH, CIN, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
