"""Red-team fixture: softmax over the last dimension."""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 4096

META = {
    "category": "normalization",
    "dtype": "float32",
    "flops": "5*ROWS*COLS",
    "bytes": "4*2*ROWS*COLS",
    "description": "torch.softmax(x, dim=-1) on a 2-D tensor.",
}

SHAPES = {
    "small": {"ROWS": 32, "COLS": 512},
    "small_extra": [{"ROWS": 19, "COLS": 333}, {"ROWS": 48, "COLS": 1000}],
    "extra": [{"ROWS": 3001, "COLS": 1999}, {"ROWS": 128, "COLS": 32768}],
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS) * 4.0]


def get_init_inputs():
    return []
