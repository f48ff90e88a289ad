"""C (M x N) = A @ B^T with B stored as (N x K)."""

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
    "description": "C (M x N) = A @ B^T with B stored as (N x K).",
}

SHAPES = {
    "small": {"M": 40, "K": 32, "N": 24},
    "small_extra": [{"M": 23, "K": 19, "N": 31}],
    "extra": [{"M": 2999, "K": 1531, "N": 2051}],
}


class Model(nn.Module):
    """C = A @ B.T."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(N, K) * K**-0.5
    return [A, B]


def get_init_inputs():
    return []
