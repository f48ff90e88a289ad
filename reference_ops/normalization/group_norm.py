"""GroupNorm with 8 groups over (BATCH, CH, H, W)."""

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
    "description": "GroupNorm with 8 groups over (BATCH, CH, H, W).",
}

SHAPES = {
    "small": {"BATCH": 4, "CH": 8, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 3, "CH": 8, "H": 7, "W": 5}],
    "extra": [{"BATCH": 19, "CH": 64, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """GroupNorm(8 groups, CH channels), affine."""

    def __init__(self, groups: int, ch: int):
        super().__init__()
        self.gn = nn.GroupNorm(groups, ch)
        with torch.no_grad():
            self.gn.weight.add_(0.1 * torch.randn(ch))
            self.gn.bias.add_(0.1 * torch.randn(ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    x = torch.randn(BATCH, CH, H, W) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [8, CH]
