"""Matrix times scalar C = A * s (s fixed at construction)."""

import torch
import torch.nn as nn

M = 8192
N = 4096

META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "M*N",
    "bytes": "4*2*M*N",
    "description": "Matrix times scalar C = A * s (s fixed at construction).",
}

SHAPES = {
    "small": {"M": 32, "N": 64},
    "small_extra": [{"M": 17, "N": 61}],
    "extra": [{"M": 6007, "N": 3001}],
}


class Model(nn.Module):
    """C = A * s for a fixed Python float s."""

    def __init__(self, s: float):
        super().__init__()
        self.s = s

    def forward(self, A: torch.Tensor) -> torch.Tensor:
        return A * self.s


def get_inputs():
    A = torch.randn(M, N)
    return [A]


def get_init_inputs():
    return [3.14]
