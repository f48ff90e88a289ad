"""Diagonal matrix times matrix: diag(d) @ B, written the naive way (the diagonal matrix is materialised; a good kernel scales rows instead)."""

import torch
import torch.nn as nn

N = 4096
M = 4096

META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "N*M",
    "bytes": "4*(N+2*N*M)",
    "description": "Diagonal matrix times matrix: diag(d) @ B, written the naive way (the diagonal matrix is materialised; a good kernel scales rows instead).",
}

SHAPES = {
    "small": {"N": 64, "M": 48},
    "small_extra": [{"N": 29, "M": 53}],
    "extra": [{"N": 3001, "M": 2047}],
}


class Model(nn.Module):
    """C = diag(d) @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, d: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(d) @ B


def get_inputs():
    d = torch.randn(N)
    B = torch.randn(N, M)
    return [d, B]


def get_init_inputs():
    return []
