"""Transposed 2D convolution, 3x3 kernel, stride 2, padding 1, output padding 1 (2x upsampling)."""

import torch
import torch.nn as nn

BATCH = 16
CIN = 64
COUT = 32
H = 128
W = 128

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*CIN*H*W*COUT*9",
    "bytes": "4*(BATCH*CIN*H*W+CIN*COUT*9+COUT+BATCH*COUT*4*H*W)",
    "description": "Transposed 2D convolution, 3x3 kernel, stride 2, padding 1, output padding 1 (2x upsampling).",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 8, "COUT": 4, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 3, "CIN": 8, "COUT": 4, "H": 7, "W": 5}],
    "extra": [{"BATCH": 13, "CIN": 64, "COUT": 32, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """nn.ConvTranspose2d(cin, cout, 3, stride=2, padding=1, output_padding=1)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(cin, cout, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
