"""Issue 25 class 1 (candidate code after the clock stops). A garbage-collector callback,
registered at import, finishes the output with torch; forward returns it unfilled and sets the
collector's threshold to 1, so the worker's first allocation after the window runs a collection,
and the callback, before the output is snapshotted (valid under strict on the old code).
Task: relu. Expected: rejected sandbox.hooks (a gc callback is registered; the candidate's worker
runs with the collector off and collects only inside windows)."""

import gc

import torch
import torch.nn as nn

_pending = []


def _finish(phase, info):
    while _pending:
        x, out = _pending.pop()
        out.copy_(torch.relu(x))
    gc.set_threshold(700)


gc.callbacks.append(_finish)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor):
        out = torch.empty_like(x)
        _pending.append((x, out))
        gc.set_threshold(1)
        return out
