"""Reverse (suffix) inclusive sum along the last dimension."""

import torch
import torch.nn as nn

BATCH = 8192
DIM = 4096

# atol=rtol=1e-3: element i of a scan sums i terms; its fp32 error depends on the scan order (a
# parallel scan differs from a sequential one by up to ~DIM*eps).
META = {
    "category": "reduction",
    "dtype": "float32",
    "atol": 0.001,
    "rtol": 0.001,
    "flops": "BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "Reverse (suffix) inclusive sum along the last dimension.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 256},
    "small_extra": [{"BATCH": 5, "DIM": 301}],
    "extra": [{"BATCH": 3001, "DIM": 4093}, {"BATCH": 61, "DIM": 100003}],
}


class Model(nn.Module):
    """flip(cumsum(flip(x)))."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(torch.cumsum(torch.flip(x, [self.dim]), dim=self.dim), [self.dim])


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return [1]
