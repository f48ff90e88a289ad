"""Masked prefix sum: cumsum(x * mask) along the last dimension."""

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
    "flops": "2*BATCH*DIM",
    "bytes": "4*2*BATCH*DIM+BATCH*DIM",
    "description": "Masked prefix sum: cumsum(x * mask) along the last dimension.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 256},
    "small_extra": [{"BATCH": 5, "DIM": 301}],
    "extra": [{"BATCH": 3001, "DIM": 4093}, {"BATCH": 61, "DIM": 100003}],
}


class Model(nn.Module):
    """torch.cumsum(x * mask, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=1)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    mask = torch.rand(BATCH, DIM) < 0.5
    return [x, mask]


def get_init_inputs():
    return []
