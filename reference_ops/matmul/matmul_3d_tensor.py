"""3D tensor times matrix: C (B x M x L) = A (B x M x K) @ W (K x L)."""

import torch
import torch.nn as nn

BATCH = 16
M = 1024
K = 1024
L = 1024

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*BATCH*M*K*L",
    "bytes": "4*(BATCH*M*K+K*L+BATCH*M*L)",
    "description": "3D tensor times matrix: C (B x M x L) = A (B x M x K) @ W (K x L).",
}

SHAPES = {
    "small": {"BATCH": 2, "M": 16, "K": 32, "L": 24},
    "small_extra": [{"BATCH": 3, "M": 11, "K": 19, "L": 9}],
    "extra": [{"BATCH": 9, "M": 1021, "K": 771, "L": 509}],
}


class Model(nn.Module):
    """C[b] = A[b] @ W for every batch entry b (W shared)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, W)


def get_inputs():
    A = torch.randn(BATCH, M, K)
    W = torch.randn(K, L) * K**-0.5
    return [A, W]


def get_init_inputs():
    return []
