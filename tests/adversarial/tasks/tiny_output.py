"""Red-team fixture, DELIBERATELY NON-DISCRIMINATIVE: outputs are ~1e-6, far below atol=1e-4.

An all-zeros output passes a plain allclose on this op. It exists so the red team can assert
that (a) the evaluator's trivial-output rule still rejects a zeros kernel and (b) the suite's
discriminative-op control flags the task itself. Never put an op like this in reference_ops/.
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 4096

META = {
    "category": "elementwise",
    "dtype": "float32",
    "flops": "BATCH*DIM",
    "bytes": "4*2*BATCH*DIM",
    "description": "x * 1e-6 (tiny outputs; tolerance-exploit fixture).",
}

SHAPES = {
    "small": {"BATCH": 64, "DIM": 512},
    "small_extra": [{"BATCH": 21, "DIM": 777}],
    "extra": [{"BATCH": 3001, "DIM": 2999}],
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 1e-6


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
