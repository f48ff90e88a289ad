"""Red-team fixture: two layers, relu(fc2(relu(fc1(x)))) (two GEMMs, two biases, two ReLUs): the
partial rule set's per-call counts matter when the reference runs an op family more than once."""

import torch
import torch.nn as nn

BATCH = 1024
IN_F = 1024
HID = 1024
OUT_F = 512

META = {
    "category": "fused",
    "dtype": "float32",
    "flops": "2*BATCH*IN_F*HID + 2*BATCH*HID*OUT_F",
    "bytes": "4*(BATCH*IN_F + IN_F*HID + HID*OUT_F + BATCH*OUT_F)",
    "description": "Two Linear + ReLU layers.",
}

SHAPES = {
    "small": {"BATCH": 32, "IN_F": 128, "HID": 96, "OUT_F": 64},
    "small_extra": [{"BATCH": 7, "IN_F": 93, "HID": 50, "OUT_F": 41}, {"BATCH": 48, "IN_F": 160, "HID": 112, "OUT_F": 80}],
    "extra": [{"BATCH": 999, "IN_F": 1001, "HID": 700, "OUT_F": 517}],
}


class Model(nn.Module):
    def __init__(self, in_f: int, hid: int, out_f: int):
        super().__init__()
        self.fc1 = nn.Linear(in_f, hid)
        self.fc2 = nn.Linear(hid, out_f)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc2(torch.relu(self.fc1(x))))


def get_inputs():
    return [torch.randn(BATCH, IN_F)]


def get_init_inputs():
    return [IN_F, HID, OUT_F]
