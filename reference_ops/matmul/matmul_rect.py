"""Rectangular matrix multiplication C (M x N) = A (M x K) @ B (K x N)."""

import torch
import torch.nn as nn

M = 4096
K = 2048
N = 3072

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*M*N*K",
    "bytes": "4*(M*K+K*N+M*N)",
    "description": "Rectangular matrix multiplication C (M x N) = A (M x K) @ B (K x N).",
}

SHAPES = {
    "small": {"M": 48, "K": 32, "N": 80},
    "small_extra": [{"M": 33, "K": 17, "N": 45}],
    "extra": [{"M": 3001, "K": 1999, "N": 2503}],
}


class Model(nn.Module):
    """C = A @ B for rectangular matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N) * K**-0.5
    return [A, B]


def get_init_inputs():
    return []
