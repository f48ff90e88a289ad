"""Transposed 3x3 conv (stride 2), subtract a learned bias, tanh."""

import torch
import torch.nn as nn

BATCH = 16
CIN = 64
COUT = 32
H = 128
W = 128

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*BATCH*CIN*H*W*COUT*9+8*BATCH*COUT*4*H*W",
    "bytes": "4*(BATCH*CIN*H*W+CIN*COUT*9+2*COUT+BATCH*COUT*4*H*W)",
    "description": "Transposed 3x3 conv (stride 2), subtract a learned bias, tanh.",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 4, "COUT": 8, "H": 10, "W": 10},
    "small_extra": [{"BATCH": 3, "CIN": 4, "COUT": 8, "H": 9, "W": 7}],
    "extra": [{"BATCH": 13, "CIN": 64, "COUT": 32, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """tanh(conv_transpose(x) - bias[c])."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(cin, cout, 3, stride=2, padding=1, output_padding=1)
        self.bias = nn.Parameter(torch.randn(cout, 1, 1) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.conv(x) - self.bias)


def get_inputs():
    x = torch.randn(BATCH, CIN, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
