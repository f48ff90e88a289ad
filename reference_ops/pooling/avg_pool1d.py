"""1D average pooling, kernel 8, stride 4, padding 2."""

import torch
import torch.nn as nn

BATCH = 64
CH = 128
L = 4096

META = {
    "category": "pooling",
    "dtype": "float32",
    "flops": "BATCH*CH*((L+4-8)//4+1)*8",
    "bytes": "4*(BATCH*CH*L+BATCH*CH*((L+4-8)//4+1))",
    "description": "1D average pooling, kernel 8, stride 4, padding 2.",
}

SHAPES = {
    "small": {"BATCH": 2, "CH": 4, "L": 64},
    "small_extra": [{"BATCH": 3, "CH": 5, "L": 37}],
    "extra": [{"BATCH": 61, "CH": 127, "L": 4001}],
}


class Model(nn.Module):
    """nn.AvgPool1d(8, stride=4, padding=2)."""

    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=8, stride=4, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(BATCH, CH, L)
    return [x]


def get_init_inputs():
    return []
