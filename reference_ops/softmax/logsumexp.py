"""Row-wise log-sum-exp: log(sum(exp(x), dim=1)), numerically stable."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

META = {
    "category": "softmax",
    "dtype": "float32",
    "flops": "4*BATCH*DIM",
    "bytes": "4*(BATCH*DIM+BATCH)",
    "description": "Row-wise log-sum-exp: log(sum(exp(x), dim=1)), numerically stable.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}, {"BATCH": 97, "DIM": 131071}],
}


class Model(nn.Module):
    """Row-wise log-sum-exp: log(sum(exp(x), dim=1)), numerically stable."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x, dim=1)


def get_inputs():
    x = torch.randn(BATCH, DIM) * 2.0
    return [x]


def get_init_inputs():
    return []
