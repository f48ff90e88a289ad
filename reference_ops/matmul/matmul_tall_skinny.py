"""Tall-skinny product: C (M x N) = A (M x K) @ B (K x N) with tiny K (output-bandwidth bound)."""

import torch
import torch.nn as nn

M = 8192
K = 64
N = 8192

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*M*N*K",
    "bytes": "4*(M*K+K*N+M*N)",
    "description": "Tall-skinny product: C (M x N) = A (M x K) @ B (K x N) with tiny K (output-bandwidth bound).",
}

SHAPES = {
    "small": {"M": 128, "K": 8, "N": 96},
    "small_extra": [{"M": 97, "K": 5, "N": 61}],
    "extra": [{"M": 6007, "K": 47, "N": 5003}],
}


class Model(nn.Module):
    """C = A @ B with a small inner dimension."""

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
