"""L2 vector norm over the last dimension of a (BATCH, DIM) tensor."""

import torch
import torch.nn as nn

BATCH = 8192
DIM = 4096

META = {
    "category": "reduction",
    "dtype": "float32",
    "flops": "2*BATCH*DIM",
    "bytes": "4*(BATCH*DIM+BATCH)",
    "description": "L2 vector norm over the last dimension of a (BATCH, DIM) tensor.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 256},
    "small_extra": [{"BATCH": 5, "DIM": 301}],
    "extra": [{"BATCH": 3001, "DIM": 4093}, {"BATCH": 61, "DIM": 100003}],
}


class Model(nn.Module):
    """torch.linalg.vector_norm(x, ord=2, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, ord=2, dim=1)


def get_inputs():
    x = torch.randn(BATCH, DIM) * (0.5 + torch.rand(BATCH, 1) * 2.0)
    return [x]


def get_init_inputs():
    return []
