"""GEMM, GELU, then LayerNorm over the output features."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2048
IN = 4096
OUT = 4096

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*BATCH*IN*OUT+16*BATCH*OUT",
    "bytes": "4*(BATCH*IN+IN*OUT+OUT+BATCH*OUT)+8*OUT",
    "description": "GEMM, GELU, then LayerNorm over the output features.",
}

SHAPES = {
    "small": {"BATCH": 16, "IN": 64, "OUT": 48},
    "small_extra": [{"BATCH": 7, "IN": 37, "OUT": 29}],
    "extra": [{"BATCH": 2001, "IN": 3001, "OUT": 2047}],
}


class Model(nn.Module):
    """layer_norm(gelu(linear(x)))."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(F.gelu(self.linear(x)))


def get_inputs():
    x = torch.randn(BATCH, IN)
    return [x]


def get_init_inputs():
    return [IN, OUT]
