"""Binary cross-entropy with logits against {0, 1} targets (scalar mean)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32768
DIM = 1024

META = {
    "category": "loss",
    "dtype": "float32",
    "flops": "6*BATCH*DIM",
    "bytes": "4*(2*BATCH*DIM+1)",
    "description": "Binary cross-entropy with logits against {0, 1} targets (scalar mean).",
}

SHAPES = {
    "small": {"BATCH": 32, "DIM": 64},
    "small_extra": [{"BATCH": 13, "DIM": 37}],
    "extra": [{"BATCH": 30011, "DIM": 1021}],
}


class Model(nn.Module):
    """F.binary_cross_entropy_with_logits(logits, targets)."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, targets)


def get_inputs():
    # a random overall scale per call: the loss value varies between seeds, so no constant passes
    scale = 0.5 + 2.0 * torch.rand(())
    logits = torch.randn(BATCH, DIM) * scale
    targets = (torch.rand(BATCH, DIM) < 0.5).float()
    return [logits, targets]


def get_init_inputs():
    return []
