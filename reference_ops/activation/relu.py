"""ReLU: max(x, 0), elementwise."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

META = {
    "category": "activation",
    "dtype": "float32",
    "flops": "1*BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "ReLU: max(x, 0), elementwise.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 1024},
    "small_extra": [{"BATCH": 7, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}, {"BATCH": 1, "DIM": 12582917}],
}


class Model(nn.Module):
    """ReLU: max(x, 0), elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    # scaled so that clamping/saturating regions of the activation are exercised
    x = torch.randn(BATCH, DIM) * 3.0
    return [x]


def get_init_inputs():
    return []
