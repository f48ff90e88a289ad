"""Product of two lower-triangular matrices, C = tril(A @ B) (N x N)."""

import torch
import torch.nn as nn

N = 4096

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "N*N*N//3",
    "bytes": "4*3*N*N//2",
    "description": "Product of two lower-triangular matrices, C = tril(A @ B) (N x N).",
}

SHAPES = {
    "small": {"N": 64},
    "small_extra": [{"N": 45}],
    "extra": [{"N": 3001}],
}


class Model(nn.Module):
    """C = tril(A @ B) for lower-triangular A and B."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


def get_inputs():
    A = torch.tril(torch.randn(N, N))
    B = torch.tril(torch.randn(N, N)) * N**-0.5
    return [A, B]


def get_init_inputs():
    return []
