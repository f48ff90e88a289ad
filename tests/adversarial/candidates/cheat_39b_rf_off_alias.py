"""Issue 25 class 2 (the counter can be switched off). The same switch through the alias torch
exports in ``torch.autograd`` (``torch.autograd._enable_record_function``), left off after the first
call's torch ReLU. Task: relu. Expected: rejected custom_code.counter_disabled."""

import torch
import torch.nn as nn

_ag = getattr(torch, "auto" + "grad")


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        getattr(_ag, "_enable_record" + "_function")(False)
        return torch.relu(x)
