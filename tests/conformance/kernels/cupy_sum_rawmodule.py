"""CUDA C through cupy.RawModule (NVRTC) with a named kernel looked up from the module: sum over
dim 1 of a (B, R, C) tensor, one thread per output column. Task: sum_dim. Expected: valid under
both rule sets where cupy is installed (skipped otherwise)."""

import cupy as cp
import torch
import torch.nn as nn

_mod = cp.RawModule(code=r"""
extern "C" __global__ void sum_mid(const float* x, float* out, int B, int R, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * C) return;
    int b = idx / C, c = idx % C;
    double acc = 0.0;
    for (int r = 0; r < R; ++r) acc += x[((long long)b * R + r) * C + c];
    out[idx] = (float)acc;
}
""")
_sum_mid = _mod.get_function("sum_mid")


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, C = x.shape
        out = torch.empty((B, C), device=x.device, dtype=x.dtype)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _sum_mid(((B * C + 255) // 256,), (256,),
                     (cp.from_dlpack(x), cp.from_dlpack(out), cp.int32(B), cp.int32(R), cp.int32(C)))
        return out
