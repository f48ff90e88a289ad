"""Issue 25 class 2 (the counter can be switched off). ``at::enableRecordFunction`` called through
ctypes: the symbol looked up by name in libtorch_cpu (built at run time), RecordFunction turned off
at import and left off, so torch's ReLU in forward is never counted. Task: relu. Expected:
rejected custom_code.counter_disabled (the ctypes look-up is recorded; the counter's probe also
fails at the end of every call)."""

import ctypes
import os

import torch
import torch.nn as nn

_lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch" + "_cpu.so"))
_fn = getattr(_lib, "_ZN2at20enable" + "RecordFunctionEb")
_fn.argtypes, _fn.restype = [ctypes.c_bool], None
_fn(False)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)
