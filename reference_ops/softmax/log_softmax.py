"""Log-softmax over the last dimension of a (BATCH x DIM) tensor."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

META = {
    "category": "softmax",
    "dtype": "float32",
    "flops": "5*BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "Log-softmax over the last dimension of a (BATCH x DIM) tensor.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}, {"BATCH": 97, "DIM": 131071}],
}


class Model(nn.Module):
    """Log-softmax over the last dimension of a (BATCH x DIM) tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    x = torch.randn(BATCH, DIM) * 2.0
    return [x]


def get_init_inputs():
    return []
