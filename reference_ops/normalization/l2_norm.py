"""Row-wise L2 normalisation: x / ||x||_2 over the last dimension."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

# atol 1e-6: outputs are of order DIM**-0.5 (~1e-2), so keep atol well below them.
META = {
    "category": "normalization",
    "dtype": "float32",
    "atol": 1e-06,
    "flops": "3*BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "Row-wise L2 normalisation: x / ||x||_2 over the last dimension.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}],
}


class Model(nn.Module):
    """x / x.norm(p=2, dim=1, keepdim=True)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p=2, dim=1, keepdim=True)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return []
