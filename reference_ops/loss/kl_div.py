"""KL divergence KL(softmax(targets) || softmax(predictions)) from logits, batchmean."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32768
DIM = 1024

META = {
    "category": "loss",
    "dtype": "float32",
    "flops": "12*BATCH*DIM",
    "bytes": "4*(2*BATCH*DIM+1)",
    "description": "KL divergence KL(softmax(targets) || softmax(predictions)) from logits, batchmean.",
}

SHAPES = {
    "small": {"BATCH": 32, "DIM": 64},
    "small_extra": [{"BATCH": 13, "DIM": 37}],
    "extra": [{"BATCH": 30011, "DIM": 1021}],
}


class Model(nn.Module):
    """F.kl_div(log_softmax(predictions), softmax(targets), reduction='batchmean')."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        log_q = torch.log_softmax(predictions, dim=-1)
        p = torch.softmax(targets, dim=-1)
        return F.kl_div(log_q, p, reduction="batchmean")


def get_inputs():
    # a random overall scale per call: the loss value varies between seeds, so no constant passes
    scale = 0.5 + 2.0 * torch.rand(())
    predictions = torch.randn(BATCH, DIM) * scale
    targets = torch.randn(BATCH, DIM)
    return [predictions, targets]


def get_init_inputs():
    return []
