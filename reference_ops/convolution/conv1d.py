"""1D convolution, kernel 3, no padding: (B, CIN, L) -> (B, COUT, L-2)."""

import torch
import torch.nn as nn

BATCH = 32
CIN = 64
COUT = 128
L = 16384
KS = 3

META = {
    "category": "convolution",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*(L-KS+1)*CIN*KS",
    "bytes": "4*(BATCH*CIN*L+COUT*CIN*KS+COUT+BATCH*COUT*(L-KS+1))",
    "description": "1D convolution, kernel 3, no padding: (B, CIN, L) -> (B, COUT, L-2).",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 4, "COUT": 8, "L": 64},
    "small_extra": [{"BATCH": 3, "CIN": 4, "COUT": 8, "L": 37}],
    "extra": [{"BATCH": 29, "CIN": 64, "COUT": 128, "L": 13001}],
}


class Model(nn.Module):
    """nn.Conv1d(cin, cout, ks) with bias."""

    def __init__(self, cin: int, cout: int, ks: int):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, ks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(BATCH, CIN, L)
    return [x]


def get_init_inputs():
    return [CIN, COUT, KS]
