"""Batched matrix multiplication C[b] = A[b] @ B[b]."""

import torch
import torch.nn as nn

BATCH = 64
M = 512
K = 512
N = 512

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*BATCH*M*N*K",
    "bytes": "4*BATCH*(M*K+K*N+M*N)",
    "description": "Batched matrix multiplication C[b] = A[b] @ B[b].",
}

SHAPES = {
    "small": {"BATCH": 4, "M": 16, "K": 32, "N": 24},
    "small_extra": [{"BATCH": 3, "M": 13, "K": 29, "N": 7}],
    "extra": [{"BATCH": 37, "M": 509, "K": 383, "N": 611}],
}


class Model(nn.Module):
    """Batched C = bmm(A, B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    A = torch.randn(BATCH, M, K)
    B = torch.randn(BATCH, K, N) * K**-0.5
    return [A, B]


def get_init_inputs():
    return []
