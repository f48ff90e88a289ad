"""4D tensor-matrix product C[b,i,j,k] = sum_l A[b,i,j,l] * W[l,k] (einsum)."""

import torch
import torch.nn as nn

B = 8
I = 64
J = 256
L = 256
K = 512

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*B*I*J*L*K",
    "bytes": "4*(B*I*J*L+L*K+B*I*J*K)",
    "description": "4D tensor-matrix product C[b,i,j,k] = sum_l A[b,i,j,l] * W[l,k] (einsum).",
}

SHAPES = {
    "small": {"B": 2, "I": 4, "J": 8, "L": 16, "K": 12},
    "small_extra": [{"B": 1, "I": 3, "J": 5, "L": 13, "K": 7}],
    "extra": [{"B": 3, "I": 61, "J": 255, "L": 129, "K": 257}],
}


class Model(nn.Module):
    """einsum('bijl,lk->bijk', A, W)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", A, W)


def get_inputs():
    A = torch.randn(B, I, J, L)
    W = torch.randn(L, K) * L ** -0.5
    return [A, W]


def get_init_inputs():
    return []
