"""3x3x3 conv (padding 1), ReLU, 2x2x2 average pool."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
CIN = 16
COUT = 32
D = 32
H = 64
W = 64

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*D*H*W*CIN*27+2*BATCH*COUT*D*H*W",
    "bytes": "4*(BATCH*CIN*D*H*W+COUT*CIN*27+COUT+BATCH*COUT*(D//2)*(H//2)*(W//2))",
    "description": "3x3x3 conv (padding 1), ReLU, 2x2x2 average pool.",
}

SHAPES = {
    "small": {"BATCH": 1, "CIN": 2, "COUT": 4, "D": 4, "H": 6, "W": 6},
    "small_extra": [{"BATCH": 2, "CIN": 2, "COUT": 4, "D": 5, "H": 7, "W": 9}],
    "extra": [{"BATCH": 7, "CIN": 16, "COUT": 32, "D": 29, "H": 61, "W": 67}],
}


class Model(nn.Module):
    """avg_pool3d(relu(conv3d(x)), 2)."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv3d(cin, cout, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool3d(torch.relu(self.conv(x)), 2)


def get_inputs():
    x = torch.randn(BATCH, CIN, D, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
