"""Margin ranking loss (margin 0.5) between two score vectors and +-1 labels."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 33554432

META = {
    "category": "loss",
    "dtype": "float32",
    "flops": "4*N",
    "bytes": "4*(3*N+1)",
    "description": "Margin ranking loss (margin 0.5) between two score vectors and +-1 labels.",
}

SHAPES = {
    "small": {"N": 2048},
    "small_extra": [{"N": 1531}],
    "extra": [{"N": 30000001}],
}


class Model(nn.Module):
    """F.margin_ranking_loss(x1, x2, y, margin=0.5)."""

    def __init__(self):
        super().__init__()

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.margin_ranking_loss(x1, x2, y, margin=0.5)


def get_inputs():
    # a random overall scale per call: the loss value varies between seeds, so no constant passes
    scale = 0.5 + 2.0 * torch.rand(())
    x1 = torch.randn(N) * scale
    x2 = torch.randn(N)
    y = torch.randint(0, 2, (N,)).float() * 2 - 1
    return [x1, x2, y]


def get_init_inputs():
    return []
