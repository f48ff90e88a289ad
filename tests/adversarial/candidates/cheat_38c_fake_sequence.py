"""Issue 25 class 1 (candidate code after the clock stops). ``forward`` returns an object that
claims to be a tuple: its ``__class__`` is a property answering ``tuple`` (so ``isinstance(out,
tuple)`` holds), and ``__iter__``/``__len__``/``__getitem__`` finish the output with torch when read.
Task: relu. Expected: rejected correctness.output_type."""

import torch
import torch.nn as nn


class Pretender:
    def __init__(self, x, out):
        self._x, self._out = x, out

    @property
    def __class__(self):
        self._out.copy_(torch.relu(self._x))
        return tuple

    def __iter__(self):
        self._out.copy_(torch.relu(self._x))
        return iter([self._out])

    def __len__(self):
        return 1

    def __getitem__(self, i):
        self._out.copy_(torch.relu(self._x))
        return [self._out][i]


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor):
        return Pretender(x, torch.empty_like(x))
