"""Transposed 1D convolution, kernel 4, stride 2, padding 1 (2x upsampling)."""

import torch
import torch.nn as nn

BATCH = 32
CIN = 128
COUT = 64
L = 8192

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*CIN*L*COUT*4",
    "bytes": "4*(BATCH*CIN*L+CIN*COUT*4+COUT+BATCH*COUT*2*L)",
    "description": "Transposed 1D convolution, kernel 4, stride 2, padding 1 (2x upsampling).",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 8, "COUT": 4, "L": 32},
    "small_extra": [{"BATCH": 3, "CIN": 8, "COUT": 4, "L": 29}],
    "extra": [{"BATCH": 29, "CIN": 128, "COUT": 64, "L": 7001}],
}


class Model(nn.Module):
    """nn.ConvTranspose1d(cin, cout, 4, stride=2, padding=1)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.ConvTranspose1d(cin, cout, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, L)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
