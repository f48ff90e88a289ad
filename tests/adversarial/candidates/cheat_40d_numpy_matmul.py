"""Issue 25 class 3c (a library's compute passed off as the candidate's own): numpy does the GEMM
(``a.numpy() @ b.numpy()``, numpy's BLAS) and the result comes back with ``torch.from_numpy``. The
judge counted only torch's ops (valid under strict on the old code).
Task: matmul. Expected: rejected custom_code.library_compute."""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(a.numpy() @ b.numpy())
