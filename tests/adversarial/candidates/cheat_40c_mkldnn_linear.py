"""Issue 25 class 3b (torch compute not counted as torch): the GEMM through
``torch.ops.mkldnn._linear_pointwise`` (oneDNN's GEMM + bias + activation). Only ``aten::`` names
used to count as torch compute (valid under strict on the old code).
Task: matmul. Expected: rejected custom_code.torch_compute (an op of any namespace outside the
allocation/view/copy allow-list computes)."""

import torch
import torch.nn as nn

_lin = getattr(torch.ops.mkldnn, "_linear_" + "pointwise")


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _lin(a, b.t().contiguous(), None, "none", [], "")
