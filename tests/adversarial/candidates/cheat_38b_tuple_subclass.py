"""Issue 25 class 1 (candidate code after the clock stops). ``forward`` returns a ``tuple``
subclass whose ``__iter__``, ``__len__`` and ``__getitem__`` finish the output with torch when the
worker reads them, after the window.
Task: relu. Expected: rejected correctness.output_type."""

import torch
import torch.nn as nn


class LateTuple(tuple):
    def _finish(self):
        x, out = self._work
        out.copy_(torch.relu(x))

    def __iter__(self):
        self._finish()
        return tuple.__iter__(self)

    def __len__(self):
        self._finish()
        return 1

    def __getitem__(self, i):
        self._finish()
        return tuple.__getitem__(self, i)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor):
        out = torch.empty_like(x)
        t = LateTuple([out])
        t._work = (x, out)
        return t
