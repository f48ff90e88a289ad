"""Masked softmax with temperature: softmax((x / T) + mask) where mask is 0 or -inf per element (every row keeps at least its first element)."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

# atol 1e-7 (not 1e-4): outputs are probabilities of order 1/DIM, so a looser atol would let an
# all-zeros output pass; fp32 error on such values is ~1e-12.
META = {
    "category": "softmax",
    "dtype": "float32",
    "atol": 1e-07,
    "flops": "6*BATCH*DIM",
    "bytes": "4*2*BATCH*DIM+BATCH*DIM",
    "description": "Masked softmax with temperature: softmax((x / T) + mask) where mask is 0 or -inf per element (every row keeps at least its first element).",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}],
}


class Model(nn.Module):
    """softmax(x / T masked to -inf where keep is False), rows always keep element 0."""

    def __init__(self, temperature: float):
        super().__init__()
        self.temperature = temperature

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        scores = (x / self.temperature).masked_fill(~keep, float("-inf"))
        return torch.softmax(scores, dim=-1)


def get_inputs():
    x = torch.randn(BATCH, DIM)
    keep = torch.rand(BATCH, DIM) < 0.7
    keep[:, 0] = True
    return [x, keep]


def get_init_inputs():
    return [0.5]
