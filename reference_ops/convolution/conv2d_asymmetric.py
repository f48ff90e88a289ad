"""2D convolution with an asymmetric 3x7 kernel and padding (1, 3) on a wide input."""

import torch
import torch.nn as nn

BATCH = 16
CIN = 64
COUT = 64
H = 64
W = 256
KH = 3
KW = 7

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*H*W*CIN*KH*KW",
    "bytes": "4*(BATCH*CIN*H*W+COUT*CIN*KH*KW+COUT+BATCH*COUT*H*W)",
    "description": "2D convolution with an asymmetric 3x7 kernel and padding (1, 3) on a wide input.",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 4, "COUT": 8, "H": 8, "W": 20},
    "small_extra": [{"BATCH": 3, "CIN": 4, "COUT": 8, "H": 7, "W": 13}],
    "extra": [{"BATCH": 13, "CIN": 64, "COUT": 64, "H": 61, "W": 251}],
}


class Model(nn.Module):
    """nn.Conv2d(cin, cout, (3, 7), padding=(1, 3))."""

    def __init__(self, cin: int, cout: int, kh: int, kw: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, (kh, kw), padding=(kh // 2, kw // 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT, KH, KW]
