"""Product of two symmetric matrices C = A @ B (N x N)."""

import torch
import torch.nn as nn

N = 4096

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*N*N*N",
    "bytes": "4*3*N*N",
    "description": "Product of two symmetric matrices C = A @ B (N x N).",
}

SHAPES = {
    "small": {"N": 64},
    "small_extra": [{"N": 51}],
    "extra": [{"N": 2999}],
}


class Model(nn.Module):
    """C = A @ B where A and B are symmetric."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, N)
    A = (A + A.T) * 0.5
    B = torch.randn(N, N) * N**-0.5
    B = (B + B.T) * 0.5
    return [A, B]


def get_init_inputs():
    return []
