"""Red-team fixture: reduction, sum over the middle dimension of a 3-D tensor."""

import torch
import torch.nn as nn

B = 32
R = 4096
C = 512

# atol 2e-3: each output sums R=4096 O(1) terms (|sum| ~ 64); its fp32 rounding error depends on the
# reduction order (a sequential column walk on the H100 was 6e-4 off torch's pairwise sum, so the
# default 1e-4 failed an honest kernel). Outputs stay far above atol: all-zeros still fails.
META = {
    "category": "reduction",
    "dtype": "float32",
    "atol": 2e-3,
    "rtol": 1e-4,
    "flops": "B*R*C",
    "bytes": "4*(B*R*C + B*C)",
    "description": "x.sum(dim=1) for x of shape (B, R, C).",
}

SHAPES = {
    "small": {"B": 8, "R": 256, "C": 64},
    "small_extra": [{"B": 3, "R": 301, "C": 37}, {"B": 11, "R": 517, "C": 80}],
    "extra": [{"B": 17, "R": 3001, "C": 389}, {"B": 64, "R": 4096, "C": 640}],
}


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(B, R, C)]


def get_init_inputs():
    return [1]
