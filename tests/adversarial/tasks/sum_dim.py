"""Red-team fixture: reduction, sum over the middle dimension of a 3-D tensor."""

import torch
import torch.nn as nn

B = 32
R = 4096
C = 512

META = {
    "category": "reduction",
    "dtype": "float32",
    "flops": "B*R*C",
    "bytes": "4*(B*R*C + B*C)",
    "description": "x.sum(dim=1) for x of shape (B, R, C).",
}

SHAPES = {
    "small": {"B": 8, "R": 256, "C": 64},
    "small_extra": [{"B": 3, "R": 301, "C": 37}, {"B": 11, "R": 517, "C": 80}],
    "extra": [{"B": 17, "R": 3001, "C": 389}, {"B": 64, "R": 4096, "C": 640}],
}


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(B, R, C)]


def get_init_inputs():
    return [1]
