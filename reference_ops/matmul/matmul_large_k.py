"""Large-K product: C (M x N) = A (M x K) @ B (K x N) with K >> M, N (split-K territory)."""

import torch
import torch.nn as nn

M = 256
K = 131072
N = 256

# Operands scaled so outputs are O(1); atol/rtol 2e-4 (not 1e-4) because the fp32 summation error
# over K=131072 terms depends on the reduction order (split-K vs sequential).
META = {
    "category": "matmul",
    "dtype": "float32",
    "atol": 0.0002,
    "rtol": 0.0002,
    "flops": "2*M*N*K",
    "bytes": "4*(M*K+K*N+M*N)",
    "description": "Large-K product: C (M x N) = A (M x K) @ B (K x N) with K >> M, N (split-K territory).",
}

SHAPES = {
    "small": {"M": 16, "K": 2048, "N": 16},
    "small_extra": [{"M": 9, "K": 3001, "N": 13}],
    "extra": [{"M": 191, "K": 100003, "N": 257}],
}


class Model(nn.Module):
    """C = A @ B with a very long inner dimension."""

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
