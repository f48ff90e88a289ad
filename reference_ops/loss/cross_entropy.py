"""Cross-entropy of logits (BATCH x CLASSES) against integer class targets."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
CLASSES = 2048

META = {
    "category": "loss",
    "dtype": "float32",
    "flops": "4*BATCH*CLASSES",
    "bytes": "4*BATCH*CLASSES+8*BATCH+4",
    "description": "Cross-entropy of logits (BATCH x CLASSES) against integer class targets.",
}

SHAPES = {
    "small": {"BATCH": 32, "CLASSES": 10},
    "small_extra": [{"BATCH": 13, "CLASSES": 7}],
    "extra": [{"BATCH": 15013, "CLASSES": 1999}],
}


class Model(nn.Module):
    """F.cross_entropy(logits, targets) (mean over the batch)."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


def get_inputs():
    # a random overall scale per call: the loss value varies between seeds, so no constant passes
    scale = 0.5 + 2.0 * torch.rand(())
    logits = torch.randn(BATCH, CLASSES) * scale
    targets = torch.randint(0, CLASSES, (BATCH,))
    return [logits, targets]


def get_init_inputs():
    return []
