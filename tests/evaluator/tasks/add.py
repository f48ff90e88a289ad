import torch
import torch.nn as nn

N = 4096

META = {"category": "elementwise", "dtype": "float32", "flops": "N", "bytes": "12*N"}
SHAPES = {"small": {"N": 1024}, "extra": [{"N": 4097}, {"N": 333}], "small_extra0": {"N": 1029}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
