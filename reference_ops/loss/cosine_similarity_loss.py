"""Mean of 1 - cosine_similarity(predictions, targets) over rows."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32768
DIM = 1024

META = {
    "category": "loss",
    "dtype": "float32",
    "flops": "8*BATCH*DIM",
    "bytes": "4*(2*BATCH*DIM+1)",
    "description": "Mean of 1 - cosine_similarity(predictions, targets) over rows.",
}

SHAPES = {
    "small": {"BATCH": 32, "DIM": 64},
    "small_extra": [{"BATCH": 13, "DIM": 37}],
    "extra": [{"BATCH": 30011, "DIM": 1021}],
}


class Model(nn.Module):
    """mean(1 - cos(predictions[i], targets[i]))."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        cos = F.cosine_similarity(predictions, targets, dim=1)
        return torch.mean(1 - cos)


def get_inputs():
    # targets correlate with predictions by a random amount, so the loss varies between seeds
    alpha = 2.0 * torch.rand(())
    predictions = torch.randn(BATCH, DIM)
    targets = alpha * predictions + torch.randn(BATCH, DIM)
    return [predictions, targets]


def get_init_inputs():
    return []
