"""GEMM, subtract the row mean, then GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2048
IN = 4096
OUT = 4096

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*BATCH*IN*OUT+10*BATCH*OUT",
    "bytes": "4*(BATCH*IN+IN*OUT+OUT+BATCH*OUT)",
    "description": "GEMM, subtract the row mean, then GELU.",
}

SHAPES = {
    "small": {"BATCH": 16, "IN": 64, "OUT": 48},
    "small_extra": [{"BATCH": 7, "IN": 37, "OUT": 29}],
    "extra": [{"BATCH": 2001, "IN": 3001, "OUT": 2047}],
}


class Model(nn.Module):
    """gelu(y - mean(y, dim=1)) with y = linear(x)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        y = y - y.mean(dim=1, keepdim=True)
        return F.gelu(y)


def get_inputs():
    x = torch.randn(BATCH, IN)
    return [x]


def get_init_inputs():
    return [IN, OUT]
