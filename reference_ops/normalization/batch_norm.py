"""BatchNorm2d in training mode (normalises with the batch's statistics)."""

import torch
import torch.nn as nn

BATCH = 32
CH = 64
H = 128
W = 128

META = {
    "category": "normalization",
    "dtype": "float32",
    "flops": "8*BATCH*CH*H*W",
    "bytes": "4*2*BATCH*CH*H*W",
    "description": "BatchNorm2d in training mode (normalises with the batch's statistics).",
}

SHAPES = {
    "small": {"BATCH": 4, "CH": 8, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 3, "CH": 8, "H": 7, "W": 5}],
    "extra": [{"BATCH": 19, "CH": 64, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """BatchNorm2d(CH), training mode, affine with non-trivial weight/bias."""

    def __init__(self, ch: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(ch)
        with torch.no_grad():
            self.bn.weight.add_(0.1 * torch.randn(ch))
            self.bn.bias.add_(0.1 * torch.randn(ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    x = torch.randn(BATCH, CH, H, W) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [CH]
