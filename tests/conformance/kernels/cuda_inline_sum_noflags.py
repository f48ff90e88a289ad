"""load_inline CUDA with no flags at all and no torch/extension.h include in the CUDA source
(load_inline adds torch/types.h). Task: sum_dim. Expected: valid under both rule sets."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
__global__ void sum_mid_k(const float* __restrict__ x, float* __restrict__ out, int B, int R, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * C) return;
    int b = idx / C, c = idx % C;
    double acc = 0.0;
    for (int r = 0; r < R; ++r) acc += x[((long long)b * R + r) * C + c];
    out[idx] = (float)acc;
}

torch::Tensor sum_mid(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 3 && x.scalar_type() == torch::kFloat32, "(B, R, C) float32 CUDA");
    auto xc = x.contiguous();
    int B = xc.size(0), R = xc.size(1), C = xc.size(2);
    auto out = torch::empty({B, C}, xc.options());
    sum_mid_k<<<(B * C + 255) / 256, 256>>>(xc.data_ptr<float>(), out.data_ptr<float>(), B, R, C);
    return out;
}
"""

_ext = load_inline(name="conf_sum_noflags", cpp_sources="torch::Tensor sum_mid(torch::Tensor x);",
                   cuda_sources=_CUDA, functions=["sum_mid"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_mid(x)
