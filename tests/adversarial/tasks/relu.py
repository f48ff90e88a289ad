"""Red-team fixture: ReLU, elementwise (max(x, 0))."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

META = {
    "category": "elementwise",
    "dtype": "float32",
    "flops": "BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "ReLU on a 2-D float32 tensor.",
}

SHAPES = {
    "small": {"BATCH": 64, "DIM": 1024},
    # one smaller and one larger than "small" (a kernel hard-coded to 64*1024 elements fails)
    "small_extra": [{"BATCH": 33, "DIM": 1531}, {"BATCH": 97, "DIM": 1029}],
    "extra": [{"BATCH": 3001, "DIM": 5003}, {"BATCH": 8192, "DIM": 4099}],
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM) * 3.0]


def get_init_inputs():
    return []
