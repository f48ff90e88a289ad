"""Softmax over very long rows (online-softmax territory): (BATCH x DIM) with DIM = 2^18."""

import torch
import torch.nn as nn

BATCH = 128
DIM = 262144

# atol 1e-8: outputs are of order 1/DIM = 4e-6, so anything looser lets zeros pass.
META = {
    "category": "softmax",
    "dtype": "float32",
    "atol": 1e-08,
    "flops": "5*BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "Softmax over very long rows (online-softmax territory): (BATCH x DIM) with DIM = 2^18.",
}

SHAPES = {
    "small": {"BATCH": 4, "DIM": 8192},
    "small_extra": [{"BATCH": 3, "DIM": 6007}],
    "extra": [{"BATCH": 67, "DIM": 300007}],
}


class Model(nn.Module):
    """Softmax over very long rows (online-softmax territory): (BATCH x DIM) with DIM = 2^18."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    x = torch.randn(BATCH, DIM) * 3.0
    return [x]


def get_init_inputs():
    return []
