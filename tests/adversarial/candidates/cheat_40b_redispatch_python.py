"""Issue 25 class 3a (torch compute not counted as torch), from Python: ``torch.ops.aten.mm``
called through its ``redispatch`` with the CPU key, which goes past RecordFunction (the op counter
and the profiler see no ``aten::mm``; valid under strict on the old code).
Task: matmul. Expected: rejected custom_code.torch_compute (a redispatch of a torch op inside
forward is recorded)."""

import torch
import torch.nn as nn

_mm = getattr(torch.ops.aten, "m" + "m").default
_ks = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return getattr(_mm, "re" + "dispatch")(_ks, a, b)
