"""Sum over dimension 1 of a (BATCH, D1, D2) tensor (strided reduction)."""

import torch
import torch.nn as nn

BATCH = 64
D1 = 1024
D2 = 512

# atol 1e-3: sums of D1=1024 O(1) terms are O(30); their fp32 error depends on the reduction order
# (~1e-4), which a correct parallel kernel may change.
META = {
    "category": "reduction",
    "dtype": "float32",
    "atol": 0.001,
    "flops": "BATCH*D1*D2",
    "bytes": "4*(BATCH*D1*D2+BATCH*D2)",
    "description": "Sum over dimension 1 of a (BATCH, D1, D2) tensor (strided reduction).",
}

SHAPES = {
    "small": {"BATCH": 4, "D1": 32, "D2": 24},
    "small_extra": [{"BATCH": 3, "D1": 17, "D2": 13}],
    "extra": [{"BATCH": 61, "D1": 1021, "D2": 509}],
}


class Model(nn.Module):
    """torch.sum(x, dim=self.dim)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    x = torch.randn(BATCH, D1, D2)
    return [x]


def get_init_inputs():
    return [1]
