"""CUDA C compiled at run time by NVRTC through cupy.RawKernel, sharing memory with torch
through DLPack, launched on torch's current stream. Task: relu. Expected: valid under both rule
sets where cupy is installed (the GPU script skips cupy rows on machines without it)."""

import cupy as cp
import torch
import torch.nn as nn

_relu = cp.RawKernel(r"""
extern "C" __global__ void relu_k(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
""", "relu_k")


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _relu(((n + 255) // 256,), (256,), (cp.from_dlpack(x), cp.from_dlpack(y), cp.int64(n)))
        return y
