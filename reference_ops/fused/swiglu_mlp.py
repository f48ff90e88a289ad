"""SwiGLU feed-forward block: W2 (silu(x W1) * (x W3)), no biases."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 4096
DIM = 1024
HIDDEN = 2816

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "6*TOKENS*DIM*HIDDEN+6*TOKENS*HIDDEN",
    "bytes": "4*(2*TOKENS*DIM+3*DIM*HIDDEN)",
    "description": "SwiGLU feed-forward block: W2 (silu(x W1) * (x W3)), no biases.",
}

SHAPES = {
    "small": {"TOKENS": 16, "DIM": 32, "HIDDEN": 48},
    "small_extra": [{"TOKENS": 7, "DIM": 32, "HIDDEN": 48}],
    "extra": [{"TOKENS": 3001, "DIM": 1024, "HIDDEN": 2816}],
}


class Model(nn.Module):
    """down(silu(gate(x)) * up(x)) as in LLaMA-style MLPs."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    x = torch.randn(TOKENS, DIM)
    return [x]


def get_init_inputs():
    return [DIM, HIDDEN]
