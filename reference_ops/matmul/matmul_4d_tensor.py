"""4D tensor-matrix product C[b,i,j,k] = sum_l A[b,i,j,l] * W[l,k] (einsum)."""

import torch
import torch.nn as nn

BATCH = 8
S1 = 64
S2 = 256
L = 256
K = 512

# Second operand scaled by K**-0.5 so outputs are O(1): the fp32 summation error then stays far
# inside atol=rtol=1e-4, while a TF32/bf16 downcast (~1e-3 relative) does not.
META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*BATCH*S1*S2*L*K",
    "bytes": "4*(BATCH*S1*S2*L+L*K+BATCH*S1*S2*K)",
    "description": "4D tensor-matrix product C[b,i,j,k] = sum_l A[b,i,j,l] * W[l,k] (einsum).",
}

SHAPES = {
    "small": {"BATCH": 2, "S1": 4, "S2": 8, "L": 16, "K": 12},
    "small_extra": [{"BATCH": 1, "S1": 3, "S2": 5, "L": 13, "K": 7}],
    "extra": [{"BATCH": 3, "S1": 61, "S2": 255, "L": 129, "K": 257}],
}


class Model(nn.Module):
    """einsum('bijl,lk->bijk', A, W)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", A, W)


def get_inputs():
    A = torch.randn(BATCH, S1, S2, L)
    W = torch.randn(L, K) * L**-0.5
    return [A, W]


def get_init_inputs():
    return []
