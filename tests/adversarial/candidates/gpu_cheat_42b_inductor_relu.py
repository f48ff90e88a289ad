"""GPU cheat #42b (issue 25, class 3 on CUDA): torch.compile writes the kernel, not the candidate.

forward hands torch's ReLU to ``torch.compile``: Inductor generates a Triton kernel
(``triton_poi_fused_relu_0``) and launches it directly, with no ``aten::relu`` for the op counter to
see. The source declares no kernel of its own. What stops it: the launched kernel is declared by no
source of the candidate's (sandbox/rules/kernelowners.py); Inductor's kernel names are never taken from a
candidate's source. Task: relu. Expected: rejected custom_code.library_compute (or
custom_code.torch_compute where the compiled graph still dispatches an aten op)."""

import torch
import torch.nn as nn

_relu = torch.compile(lambda x: torch.relu(x), dynamic=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _relu(x)
