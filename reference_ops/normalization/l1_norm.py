"""Row-wise L1 normalisation: x / sum(|x|) over the last dimension."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

# atol 1e-8: outputs are of order 1/DIM (~1e-4), so atol 1e-4 would let all-zeros pass.
META = {
    "category": "normalization",
    "dtype": "float32",
    "atol": 1e-08,
    "flops": "3*BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "Row-wise L1 normalisation: x / sum(|x|) over the last dimension.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}],
}


class Model(nn.Module):
    """x / sum(|x|, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.sum(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return []
