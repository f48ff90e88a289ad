"""Frobenius normalisation of a whole tensor: x / ||x||_F."""

import torch
import torch.nn as nn

BATCH = 64
CH = 64
H = 64
W = 128

# atol 1e-9: outputs are of order numel**-0.5 (~2e-4 at the default shape, smaller at extra
# shapes), so atol must sit well below them for zeros to fail.
META = {
    "category": "normalization",
    "dtype": "float32",
    "atol": 1e-09,
    "flops": "3*BATCH*CH*H*W",
    "bytes": "4*2*BATCH*CH*H*W",
    "description": "Frobenius normalisation of a whole tensor: x / ||x||_F.",
}

SHAPES = {
    "small": {"BATCH": 4, "CH": 8, "H": 16, "W": 16},
    "small_extra": [{"BATCH": 3, "CH": 5, "H": 7, "W": 11}],
    "extra": [{"BATCH": 61, "CH": 67, "H": 63, "W": 127}],
}


class Model(nn.Module):
    """x / torch.norm(x, p='fro') over all elements."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p="fro")


def get_inputs():
    x = torch.randn(BATCH, CH, H, W)
    return [x]


def get_init_inputs():
    return []
