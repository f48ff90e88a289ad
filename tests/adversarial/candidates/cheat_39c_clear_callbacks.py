"""Issue 25 class 2 (the counter can be switched off). At import, every RecordFunction callback
(the op counter's among them) is removed with ``torch._C._autograd._clear_callbacks``; forward then
runs torch's ReLU uncounted. Task: relu. Expected: rejected custom_code.counter_disabled."""

import torch
import torch.nn as nn

getattr(getattr(torch._C, "_auto" + "grad"), "_clear_" + "callbacks")()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
