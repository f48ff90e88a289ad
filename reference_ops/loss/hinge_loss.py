"""Hinge loss mean(clamp(1 - predictions * targets, min=0)) with targets in {-1, +1}."""

import torch
import torch.nn as nn

BATCH = 32768
DIM = 1024

META = {
    "category": "loss",
    "dtype": "float32",
    "flops": "4*BATCH*DIM",
    "bytes": "4*(2*BATCH*DIM+1)",
    "description": "Hinge loss mean(clamp(1 - predictions * targets, min=0)) with targets in {-1, +1}.",
}

SHAPES = {
    "small": {"BATCH": 32, "DIM": 64},
    "small_extra": [{"BATCH": 13, "DIM": 37}],
    "extra": [{"BATCH": 30011, "DIM": 1021}],
}


class Model(nn.Module):
    """mean(clamp(1 - predictions * targets, min=0))."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.clamp(1 - predictions * targets, min=0).mean()


def get_inputs():
    # a random overall scale per call: the loss value varies between seeds, so no constant passes
    scale = 0.5 + 2.0 * torch.rand(())
    predictions = torch.randn(BATCH, DIM) * scale
    targets = torch.randint(0, 2, (BATCH, DIM)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
