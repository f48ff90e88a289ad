"""An honest C++ relu whose extension is built inside forward, on the first call (a common shape
of generated kernels: ``_ext = None`` at import). The build worker only imports the candidate
and builds ModelNew, so nothing is built before judging; the sealed judging worker cannot build
at its first call (no compiler, read-only build dir), and the judgement moves to the warm-apart
order: a separate worker makes the first calls, then the judging worker loads the build sealed."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# the C++ source repeats build_apart_probe.py's on purpose: a candidate is one self-contained source
_SRC = r"""
#include <torch/extension.h>
torch::Tensor relu_cpu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* p = xc.data_ptr<float>();
    float* q = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) q[i] = p[i] > 0.f ? p[i] : 0.f;
    return out;
}
"""

_ext = None


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        global _ext
        if _ext is None:
            _ext = load_inline(name="kh_build_apart_lazy_relu", cpp_sources=_SRC, functions=["relu_cpu"],
                               extra_cflags=["-O2"], verbose=False)
        return _ext.relu_cpu(x)
