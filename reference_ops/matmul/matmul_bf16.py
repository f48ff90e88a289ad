"""Square bfloat16 matrix multiplication C = A @ B (N x N), bf16 in and out."""

import torch
import torch.nn as nn

N = 4096

META = {
    "category": "matmul",
    "dtype": "bfloat16",
    "flops": "2*N*N*N",
    "bytes": "2*3*N*N",
    "description": "Square bfloat16 matrix multiplication C = A @ B (N x N), bf16 in and out.",
}

SHAPES = {
    "small": {"N": 64},
    "small_extra": [{"N": 37}],
    "extra": [{"N": 3001}],
}


class Model(nn.Module):
    """C = A @ B in bfloat16."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, N, dtype=torch.bfloat16)
    B = (torch.randn(N, N) * N**-0.5).to(torch.bfloat16)
    return [A, B]


def get_init_inputs():
    return []
