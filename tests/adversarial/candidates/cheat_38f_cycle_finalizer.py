"""Issue 25 class 1 (candidate code after the clock stops). forward leaves a reference cycle
whose ``__del__`` finishes the output with torch, turns the collector on and sets its threshold
to 1: the worker's first allocation after the window collects the cycle and runs ``__del__``
before the output is snapshotted (valid under strict on the old code).
Task: relu. Expected: rejected sandbox.hooks (the collector was turned back on)."""

import gc

import torch
import torch.nn as nn


class Finisher:
    def __init__(self, x, out):
        self.x, self.out, self.me = x, out, self  # a cycle: only the collector frees it

    def __del__(self):
        self.out.copy_(torch.relu(self.x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor):
        out = torch.empty_like(x)
        Finisher(x, out)
        gc.enable()
        gc.set_threshold(1)
        return out
