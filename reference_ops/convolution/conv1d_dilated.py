"""1D convolution, kernel 5, dilation 4, stride 2, padding 8."""

import torch
import torch.nn as nn

BATCH = 32
CIN = 64
COUT = 64
L = 32768
KS = 5

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*((L+16-4*(KS-1)-1)//2+1)*CIN*KS",
    "bytes": "4*(BATCH*CIN*L+COUT*CIN*KS+COUT+BATCH*COUT*((L+16-4*(KS-1)-1)//2+1))",
    "description": "1D convolution, kernel 5, dilation 4, stride 2, padding 8.",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 4, "COUT": 8, "L": 96},
    "small_extra": [{"BATCH": 3, "CIN": 4, "COUT": 8, "L": 71}],
    "extra": [{"BATCH": 29, "CIN": 64, "COUT": 64, "L": 30011}],
}


class Model(nn.Module):
    """nn.Conv1d with dilation 4, stride 2, padding 8."""

    def __init__(self, cin: int, cout: int, ks: int):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, ks, stride=2, padding=8, dilation=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, L)
    return [x]


def get_init_inputs():
    return [CIN, COUT, KS]
