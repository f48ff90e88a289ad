"""Huber / smooth-L1 loss with beta 1.0 (scalar mean)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32768
DIM = 1024

META = {
    "category": "loss",
    "dtype": "float32",
    "flops": "5*BATCH*DIM",
    "bytes": "4*(2*BATCH*DIM+1)",
    "description": "Huber / smooth-L1 loss with beta 1.0 (scalar mean).",
}

SHAPES = {
    "small": {"BATCH": 32, "DIM": 64},
    "small_extra": [{"BATCH": 13, "DIM": 37}],
    "extra": [{"BATCH": 30011, "DIM": 1021}],
}


class Model(nn.Module):
    """F.smooth_l1_loss(predictions, targets, beta=1.0)."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets, beta=1.0)


def get_inputs():
    # a random overall scale per call: the loss value varies between seeds, so no constant passes
    scale = 0.5 + 2.0 * torch.rand(())
    predictions = torch.randn(BATCH, DIM) * scale
    targets = torch.randn(BATCH, DIM)
    return [predictions, targets]


def get_init_inputs():
    return []
