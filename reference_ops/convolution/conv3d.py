"""3D convolution, 3x3x3 kernel, no padding."""

import torch
import torch.nn as nn

BATCH = 8
CIN = 16
COUT = 32
D = 32
H = 64
W = 64
KS = 3

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*(D-KS+1)*(H-KS+1)*(W-KS+1)*CIN*KS**3",
    "bytes": "4*(BATCH*CIN*D*H*W+COUT*CIN*KS**3+COUT+BATCH*COUT*(D-KS+1)*(H-KS+1)*(W-KS+1))",
    "description": "3D convolution, 3x3x3 kernel, no padding.",
}

SHAPES = {
    "small": {"BATCH": 1, "CIN": 2, "COUT": 4, "D": 6, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 2, "CIN": 2, "COUT": 4, "D": 5, "H": 7, "W": 9}],
    "extra": [{"BATCH": 7, "CIN": 16, "COUT": 32, "D": 29, "H": 61, "W": 67}],
}


class Model(nn.Module):
    """nn.Conv3d(cin, cout, ks) with bias."""

    def __init__(self, cin: int, cout: int, ks: int):
        super().__init__()
        self.conv = nn.Conv3d(cin, cout, ks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, D, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT, KS]
