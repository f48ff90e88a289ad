"""GELU, tanh approximation."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 8192

META = {
    "category": "activation",
    "dtype": "float32",
    "flops": "10*BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "GELU, tanh approximation.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 1024},
    "small_extra": [{"BATCH": 7, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}, {"BATCH": 1, "DIM": 12582917}],
}


class Model(nn.Module):
    """GELU, tanh approximation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_inputs():
    # scaled so that clamping/saturating regions of the activation are exercised
    x = torch.randn(BATCH, DIM) * 3.0
    return [x]


def get_init_inputs():
    return []
