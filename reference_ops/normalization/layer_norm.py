"""LayerNorm over the last dimension with learnable weight and bias (initialised to non-trivial values)."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192

META = {
    "category": "normalization",
    "dtype": "float32",
    "flops": "8*BATCH*DIM",
    "bytes": "4*(2*BATCH*DIM+2*DIM)",
    "description": "LayerNorm over the last dimension with learnable weight and bias (initialised to non-trivial values).",
}

SHAPES = {
    "small": {"BATCH": 16, "DIM": 512},
    "small_extra": [{"BATCH": 5, "DIM": 1531}],
    "extra": [{"BATCH": 3001, "DIM": 5003}],
}


class Model(nn.Module):
    """LayerNorm(DIM) with weight/bias perturbed from their 1/0 init."""

    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.add_(0.1 * torch.randn(dim))
            self.norm.bias.add_(0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    # offset and scale so that normalising actually changes the values
    x = torch.randn(BATCH, DIM) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [DIM]
