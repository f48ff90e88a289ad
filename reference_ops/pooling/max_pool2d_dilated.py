"""2D max pooling, 3x3 kernel, stride 2, padding 1, dilation 2."""

import torch
import torch.nn as nn

BATCH = 32
CH = 64
H = 128
W = 128

META = {
    "category": "pooling",
    "dtype": "float32",
    "flops": "BATCH*CH*((H+2-2*2-1)//2+1)*((W+2-2*2-1)//2+1)*9",
    "bytes": "4*(BATCH*CH*H*W+BATCH*CH*((H+2-2*2-1)//2+1)*((W+2-2*2-1)//2+1))",
    "description": "2D max pooling, 3x3 kernel, stride 2, padding 1, dilation 2.",
}

SHAPES = {
    "small": {"BATCH": 2, "CH": 4, "H": 12, "W": 12},
    "small_extra": [{"BATCH": 3, "CH": 5, "H": 11, "W": 9}],
    "extra": [{"BATCH": 29, "CH": 67, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """nn.MaxPool2d(3, stride=2, padding=1, dilation=2)."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(BATCH, CH, H, W)
    return [x]


def get_init_inputs():
    return []
