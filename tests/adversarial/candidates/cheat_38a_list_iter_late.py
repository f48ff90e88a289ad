"""Issue 25 class 1 (candidate code after the clock stops). ``forward`` returns a ``list`` subclass
holding an unfilled output; its ``__iter__`` computes the ReLU into it with torch. The worker used
to iterate the returned list after the clock, the op counter and the profiler had stopped, so
the torch compute ran untimed and unseen (valid under strict on the old code).
Task: relu. Expected: rejected correctness.output_type (only a plain tensor or a plain
tuple/list of them is accepted, unpacked inside the counted window)."""

import torch
import torch.nn as nn


class LateList(list):
    def __init__(self, x, out):
        super().__init__([out])
        self._x, self._out = x, out

    def __iter__(self):
        self._out.copy_(torch.relu(self._x))  # after the window: untimed, uncounted
        return super().__iter__()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor):
        return LateList(x, torch.empty_like(x))
