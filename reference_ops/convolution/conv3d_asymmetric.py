"""3D convolution with a 1x3x5 kernel and 'same' padding on a video-like input."""

import torch
import torch.nn as nn

BATCH = 8
CIN = 32
COUT = 32
D = 16
H = 64
W = 64

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*D*H*W*CIN*15",
    "bytes": "4*(BATCH*CIN*D*H*W+COUT*CIN*15+COUT+BATCH*COUT*D*H*W)",
    "description": "3D convolution with a 1x3x5 kernel and 'same' padding on a video-like input.",
}

SHAPES = {
    "small": {"BATCH": 1, "CIN": 2, "COUT": 4, "D": 4, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 2, "CIN": 2, "COUT": 4, "D": 3, "H": 7, "W": 9}],
    "extra": [{"BATCH": 7, "CIN": 32, "COUT": 32, "D": 13, "H": 61, "W": 67}],
}


class Model(nn.Module):
    """nn.Conv3d(cin, cout, (1, 3, 5), padding=(0, 1, 2))."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv3d(cin, cout, (1, 3, 5), padding=(0, 1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, D, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
