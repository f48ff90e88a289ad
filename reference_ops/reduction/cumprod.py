"""Inclusive prefix product along the last dimension (factors near 1)."""

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
    "description": "Inclusive prefix product along the last dimension (factors near 1).",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 256},
    "small_extra": [{"BATCH": 5, "DIM": 301}],
    "extra": [{"BATCH": 3001, "DIM": 4093}],
}


class Model(nn.Module):
    """torch.cumprod(x, dim=self.dim)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    # factors near 1 keep the running product in range over 4096 steps
    x = 1.0 + 0.02 * torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return [1]
