"""Exclusive prefix sum along the last dimension (out[:, 0] = 0)."""

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
    "description": "Exclusive prefix sum along the last dimension (out[:, 0] = 0).",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 256},
    "small_extra": [{"BATCH": 5, "DIM": 301}],
    "extra": [{"BATCH": 3001, "DIM": 4093}, {"BATCH": 61, "DIM": 100003}],
}


class Model(nn.Module):
    """out[:, j] = sum(x[:, :j]); out[:, 0] = 0."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inclusive = torch.cumsum(x, dim=1)
        return torch.cat([torch.zeros_like(x[:, :1]), inclusive[:, :-1]], dim=1)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    return [x]


def get_init_inputs():
    return []
