"""Argmin over dimension 2 (contiguous) of a (BATCH, D1, D2) tensor (int64 indices)."""

import torch
import torch.nn as nn

BATCH = 64
D1 = 1024
D2 = 512

# Indices must match exactly.
META = {
    "category": "reduction",
    "dtype": "float32",
    "atol": 0.0,
    "rtol": 0.0,
    "flops": "BATCH*D1*D2",
    "bytes": "4*BATCH*D1*D2+8*BATCH*D1",
    "description": "Argmin over dimension 2 (contiguous) of a (BATCH, D1, D2) tensor (int64 indices).",
}

SHAPES = {
    "small": {"BATCH": 4, "D1": 32, "D2": 24},
    "small_extra": [{"BATCH": 3, "D1": 17, "D2": 13}],
    "extra": [{"BATCH": 61, "D1": 1021, "D2": 509}],
}


class Model(nn.Module):
    """torch.argmin(x, dim=self.dim)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=self.dim)


def get_inputs():
    x = torch.randn(BATCH, D1, D2)
    return [x]


def get_init_inputs():
    return [2]
