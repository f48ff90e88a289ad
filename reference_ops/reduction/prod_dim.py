"""Product over dimension 1 of a (BATCH, D1, D2) tensor of factors near 1."""

import torch
import torch.nn as nn

BATCH = 64
D1 = 1024
D2 = 512

# rtol 1e-3: a product of D1=1024 factors carries relative rounding error that depends on the
# multiplication order.
META = {
    "category": "reduction",
    "dtype": "float32",
    "rtol": 0.001,
    "flops": "BATCH*D1*D2",
    "bytes": "4*(BATCH*D1*D2+BATCH*D2)",
    "description": "Product over dimension 1 of a (BATCH, D1, D2) tensor of factors near 1.",
}

SHAPES = {
    "small": {"BATCH": 4, "D1": 32, "D2": 24},
    "small_extra": [{"BATCH": 3, "D1": 17, "D2": 13}],
    "extra": [{"BATCH": 61, "D1": 1021, "D2": 509}],
}


class Model(nn.Module):
    """torch.prod(x, dim=self.dim)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


def get_inputs():
    # factors near 1 so the product neither overflows nor underflows, yet varies per element
    x = 1.0 + 0.05 * torch.randn(BATCH, D1, D2)
    return [x]


def get_init_inputs():
    return [1]
