"""Red-team fixture: 2-D convolution, 3x3 kernel, stride 1, padding 1, with bias."""

import torch
import torch.nn as nn

BATCH = 16
C_IN = 32
C_OUT = 64
H = 64
W = 64
KSIZE = 3

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*C_OUT*H*W*C_IN*KSIZE*KSIZE",
    "bytes": "4*(BATCH*C_IN*H*W + C_OUT*C_IN*KSIZE*KSIZE + BATCH*C_OUT*H*W)",
    "description": "nn.Conv2d(C_IN, C_OUT, KSIZE, padding=KSIZE//2).",
}

SHAPES = {
    "small": {"BATCH": 2, "C_IN": 4, "C_OUT": 8, "H": 16, "W": 16},
    "small_extra": [{"BATCH": 1, "C_IN": 3, "C_OUT": 5, "H": 13, "W": 11},
                    {"BATCH": 3, "C_IN": 6, "C_OUT": 8, "H": 20, "W": 17}],
    "extra": [{"BATCH": 5, "C_IN": 19, "C_OUT": 37, "H": 57, "W": 61},
              {"BATCH": 8, "C_IN": 64, "C_OUT": 64, "H": 56, "W": 56}],
}


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int, ksize: int):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, ksize, padding=ksize // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KSIZE]
