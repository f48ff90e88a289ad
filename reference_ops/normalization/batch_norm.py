"""BatchNorm over (BATCH, H, W) per channel using the batch's own statistics (training-mode semantics, also under model.eval())."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CH = 64
H = 128
W = 128

META = {
    "category": "normalization",
    "dtype": "float32",
    "flops": "8*BATCH*CH*H*W",
    "bytes": "4*2*BATCH*CH*H*W",
    "description": "BatchNorm over (BATCH, H, W) per channel using the batch's own statistics (training-mode semantics, also under model.eval()).",
}

SHAPES = {
    "small": {"BATCH": 4, "CH": 8, "H": 8, "W": 8},
    "small_extra": [{"BATCH": 3, "CH": 8, "H": 7, "W": 5}],
    "extra": [{"BATCH": 19, "CH": 64, "H": 97, "W": 131}],
}


class Model(nn.Module):
    """F.batch_norm with training=True: per-channel batch mean/variance, affine weight/bias."""

    def __init__(self, ch: int):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(ch))
        self.bias = nn.Parameter(0.1 * torch.randn(ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # training=True: statistics always come from the batch, whatever the module's train/eval mode
        return F.batch_norm(x, None, None, self.weight, self.bias, training=True, eps=1e-5)


def get_inputs():
    x = torch.randn(BATCH, CH, H, W) * 2.0 + 0.5
    return [x]


def get_init_inputs():
    return [CH]
