"""Red-team fixture: dense fp32 matrix multiplication C = A @ B."""

import torch
import torch.nn as nn

M = 1024
K = 1024
N = 1024

META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*M*N*K",
    "bytes": "4*(M*K + K*N + M*N)",
    "description": "fp32 GEMM, no TF32.",
}

SHAPES = {
    "small": {"M": 64, "K": 128, "N": 96},
    "small_extra": [{"M": 37, "K": 71, "N": 53}, {"M": 80, "K": 160, "N": 112}],
    "extra": [{"M": 1000, "K": 777, "N": 1203}, {"M": 2048, "K": 1024, "N": 1536}],
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
