"""3x3 conv (padding 1), batch norm with the batch's statistics (training-mode semantics, also under model.eval()), ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CIN = 32
COUT = 64
H = 128
W = 128

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*BATCH*COUT*H*W*CIN*9+10*BATCH*COUT*H*W",
    "bytes": "4*(BATCH*CIN*H*W+COUT*CIN*9+COUT+BATCH*COUT*H*W)",
    "description": "3x3 conv (padding 1), batch norm with the batch's statistics (training-mode semantics, also under model.eval()), ReLU.",
}

SHAPES = {
    "small": {"BATCH": 2, "CIN": 4, "COUT": 8, "H": 10, "W": 10},
    "small_extra": [{"BATCH": 3, "CIN": 4, "COUT": 8, "H": 9, "W": 7}],
    "extra": [{"BATCH": 29, "CIN": 32, "COUT": 64, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """relu(batch_norm(conv(x), training=True))."""

    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn_weight = nn.Parameter(1.0 + 0.1 * torch.randn(cout))
        self.bn_bias = nn.Parameter(0.1 * torch.randn(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        y = F.batch_norm(y, None, None, self.bn_weight, self.bn_bias, training=True, eps=1e-5)
        return torch.relu(y)


def get_inputs():
    x = torch.randn(BATCH, CIN, H, W)
    return [x]


def get_init_inputs():
    return [CIN, COUT]
