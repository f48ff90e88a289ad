"""Red-team fixture: fused chain, relu(x @ W^T + b) (nn.Linear followed by ReLU)."""

import torch
import torch.nn as nn

BATCH = 1024
IN_F = 1024
OUT_F = 1024

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*BATCH*IN_F*OUT_F + 2*BATCH*OUT_F",
    "bytes": "4*(BATCH*IN_F + IN_F*OUT_F + OUT_F + BATCH*OUT_F)",
    "description": "Linear + bias + ReLU.",
}

SHAPES = {
    "small": {"BATCH": 32, "IN_F": 128, "OUT_F": 64},
    "small_extra": [{"BATCH": 7, "IN_F": 93, "OUT_F": 41}, {"BATCH": 48, "IN_F": 160, "OUT_F": 80}],
    "extra": [{"BATCH": 999, "IN_F": 1001, "OUT_F": 517}, {"BATCH": 2048, "IN_F": 2048, "OUT_F": 1024}],
}


class Model(nn.Module):
    def __init__(self, in_f: int, out_f: int):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_F)]


def get_init_inputs():
    return [IN_F, OUT_F]
