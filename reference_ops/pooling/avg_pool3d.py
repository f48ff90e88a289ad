"""3D average pooling, 3x3x3 kernel, stride 2, padding 1."""

import torch
import torch.nn as nn

BATCH = 8
CH = 32
D = 32
H = 64
W = 64

META = {
    "category": "pooling",
    "dtype": "float32",
    "flops": "BATCH*CH*((D+2-3)//2+1)*((H+2-3)//2+1)*((W+2-3)//2+1)*27",
    "bytes": "4*(BATCH*CH*D*H*W+BATCH*CH*((D+2-3)//2+1)*((H+2-3)//2+1)*((W+2-3)//2+1))",
    "description": "3D average pooling, 3x3x3 kernel, stride 2, padding 1.",
}

SHAPES = {
    "small": {"BATCH": 1, "CH": 2, "D": 6, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 2, "CH": 3, "D": 5, "H": 7, "W": 9}],
    "extra": [{"BATCH": 7, "CH": 31, "D": 29, "H": 61, "W": 67}],
}


class Model(nn.Module):
    """nn.AvgPool3d(3, stride=2, padding=1)."""

    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(BATCH, CH, D, H, W)
    return [x]


def get_init_inputs():
    return []
