"""Sum of all elements of a (BATCH, DIM) tensor to a scalar."""

import torch
import torch.nn as nn

BATCH = 8192
DIM = 4096

# atol 1e-2: a total of 3e7 terms has order-dependent rounding error far above 1e-4 in absolute
# terms; rtol 1e-4 keeps it tight relative to the value.
META = {
    "category": "reduction",
    "dtype": "float32",
    "atol": 0.01,
    "flops": "BATCH*DIM",
    "bytes": "4*BATCH*DIM+4",
    "description": "Sum of all elements of a (BATCH, DIM) tensor to a scalar.",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 256},
    "small_extra": [{"BATCH": 5, "DIM": 301}],
    "extra": [{"BATCH": 3001, "DIM": 4093}, {"BATCH": 61, "DIM": 100003}],
}


class Model(nn.Module):
    """x.sum() over every element."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x)


def get_inputs():
    # a random offset per call makes the total vary widely between seeds (a constant cannot pass)
    x = torch.randn(BATCH, DIM) + torch.randn(()) * 4.0
    return [x]


def get_init_inputs():
    return []
