"""C (M x N) = A^T @ B with A stored as (K x M)."""

import torch
import torch.nn as nn

M = 4096
K = 2048
N = 2048

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*M*N*K",
    "bytes": "4*(M*K+K*N+M*N)",
    "description": "C (M x N) = A^T @ B with A stored as (K x M).",
}

SHAPES = {
    "small": {"M": 40, "K": 32, "N": 24},
    "small_extra": [{"M": 23, "K": 19, "N": 31}],
    "extra": [{"M": 3001, "K": 1533, "N": 2047}],
}


class Model(nn.Module):
    """C = A.T @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(K, N) * K**-0.5
    return [A, B]


def get_init_inputs():
    return []
