"""GEMM, Swish, divide by 2, clamp to [-1, 1], tanh, clamp again."""

import torch
import torch.nn as nn

BATCH = 2048
IN = 4096
OUT = 4096

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*BATCH*IN*OUT+14*BATCH*OUT",
    "bytes": "4*(BATCH*IN+IN*OUT+OUT+BATCH*OUT)",
    "description": "GEMM, Swish, divide by 2, clamp to [-1, 1], tanh, clamp again.",
}

SHAPES = {
    "small": {"BATCH": 16, "IN": 64, "OUT": 48},
    "small_extra": [{"BATCH": 7, "IN": 37, "OUT": 29}],
    "extra": [{"BATCH": 2001, "IN": 3001, "OUT": 2047}],
}


class Model(nn.Module):
    """clamp(tanh(clamp(swish(linear(x)) / 2, -1, 1)), -1, 1)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        y = y * torch.sigmoid(y)
        y = y / 2.0
        y = torch.clamp(y, min=-1.0, max=1.0)
        y = torch.tanh(y)
        return torch.clamp(y, min=-1.0, max=1.0)


def get_inputs():
    x = torch.randn(BATCH, IN) * 4.0
    return [x]


def get_init_inputs():
    return [IN, OUT]
