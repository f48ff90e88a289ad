"""Triplet margin loss (margin 1.0, L2 distance) over (anchor, positive, negative) rows."""

import torch
import torch.nn as nn

BATCH = 32768
DIM = 1024

META = {
    "category": "loss",
    "dtype": "float32",
    "flops": "8*BATCH*DIM",
    "bytes": "4*(3*BATCH*DIM+1)",
    "description": "Triplet margin loss (margin 1.0, L2 distance) over (anchor, positive, negative) rows.",
}

SHAPES = {
    "small": {"BATCH": 32, "DIM": 64},
    "small_extra": [{"BATCH": 13, "DIM": 37}],
    "extra": [{"BATCH": 30011, "DIM": 1021}],
}


class Model(nn.Module):
    """nn.TripletMarginLoss(margin=1.0)."""

    def __init__(self):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=1.0)

    def forward(
        self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor
    ) -> torch.Tensor:
        return self.loss(anchor, positive, negative)


def get_inputs():
    # positives sit at a random per-row distance from their anchor, so the hinge is active for some rows
    anchor = torch.randn(BATCH, DIM)
    positive = anchor + torch.randn(BATCH, DIM) * (2.0 * torch.rand(BATCH, 1))
    negative = torch.randn(BATCH, DIM)
    return [anchor, positive, negative]


def get_init_inputs():
    return []
