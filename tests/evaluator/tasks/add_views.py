import torch
import torch.nn as nn

N = 64

META = {"category": "elementwise", "dtype": "float32", "flops": "N*N", "bytes": "12*N*N"}
SHAPES = {"small": {"N": 32}, "extra": [{"N": 33}]}


class Model(nn.Module):
    """a + b where ``a`` is a transposed view and ``b`` a row broadcast by ``expand``: the
    harness must hand the call inputs with these exact layouts."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.randn(N, N).t(), torch.randn(1, N).expand(N, N)]


def get_init_inputs():
    return []
