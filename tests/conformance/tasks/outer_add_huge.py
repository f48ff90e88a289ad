"""Conformance task: a huge output from small inputs, out[i, j] = a[i] + b[j]: 2**15 x 2**14
float32 = 2 GiB written per call (output comparison and poisoning at scale)."""

import torch
import torch.nn as nn

M = 32768
N = 16384

META = {
    "category": "elementwise",
    "dtype": "float32",
    "flops": "M*N",
    "bytes": "4*(M + N + M*N)",
    "description": "Outer sum of two vectors (2 GiB output).",
}

SHAPES = {
    "small": {"M": 256, "N": 128},
    "small_extra": [{"M": 77, "N": 131}],
    "extra": [{"M": 30001, "N": 16411}],
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a[:, None] + b[None, :]


def get_inputs():
    return [torch.randn(M), torch.randn(N)]


def get_init_inputs():
    return []
