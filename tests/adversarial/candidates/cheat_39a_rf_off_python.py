"""Issue 25 class 2 (the counter can be switched off). forward turns RecordFunction off on its
thread around torch's ReLU, through ``torch._C._autograd._enable_record_function`` looked up by a
name built at run time: the op counter and the profiler both saw nothing (valid under strict on the
old code). Task: relu. Expected: rejected custom_code.counter_disabled (the switch is a tripwire:
it records and leaves RecordFunction on)."""

import torch
import torch.nn as nn

_switch = getattr(getattr(torch._C, "_auto" + "grad"), "_enable_rec" + "ord_function")


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _switch(False)
        try:
            return torch.relu(x)
        finally:
            _switch(True)
