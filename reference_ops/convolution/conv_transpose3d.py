"""Transposed 3D convolution, 3x3x3 kernel, stride 2, padding 1, output padding 1 (2x upsampling)."""

import torch
import torch.nn as nn

BATCH = 8
CIN = 32
COUT = 16
D = 16
H = 48
W = 48

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*CIN*D*H*W*COUT*27",
    "bytes": "4*(BATCH*CIN*D*H*W+CIN*COUT*27+COUT+BATCH*COUT*8*D*H*W)",
    "description": "Transposed 3D convolution, 3x3x3 kernel, stride 2, padding 1, output padding 1 (2x upsampling).",
}

SHAPES = {
    "small": {"BATCH": 1, "CIN": 4, "COUT": 2, "D": 4, "H": 6, "W": 6},
    "small_extra": [{"BATCH": 2, "CIN": 4, "COUT": 2, "D": 3, "H": 5, "W": 7}],
    "extra": [{"BATCH": 7, "CIN": 32, "COUT": 16, "D": 13, "H": 47, "W": 37}],
}


class Model(nn.Module):
    """nn.ConvTranspose3d(cin, cout, 3, stride=2, padding=1, output_padding=1)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.ConvTranspose3d(cin, cout, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, D, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
