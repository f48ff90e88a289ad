"""No kernel of its own: forward calls torch.relu (pure Python, nothing to compile).
Task: relu. Expected: rejected custom_code.torch_compute (strict); rejected
custom_code.no_replacement (partial: no reference op is replaced)."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
