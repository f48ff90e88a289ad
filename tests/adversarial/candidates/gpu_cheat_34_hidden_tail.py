"""Cheat #34 (a tail past the end event, above the wall-clock floor). The kernel is honest, but
after it the candidate queues 30.0 us of spin on a side stream it never joins, except inside a
profiled call (where the custom-code check would name the side stream): the events see only
the relu; the device sync in the worker waits for the spin. The only defence left is the
parent-clock cross-check (sandbox/timing/wallclock.py), whose floor for the relu (~93 us on the H100)
is 20 us. Task: relu. Expected: rejected timing.wall_clock."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# --- shared CUDA extension (identical in every CUDA red-team candidate: one ~50 s compile in all)
_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#define CHECK_CUDA_F32(t) TORCH_CHECK((t).is_cuda() && (t).scalar_type() == torch::kFloat32 && (t).is_contiguous(), #t " must be a contiguous float32 CUDA tensor")

__global__ void relu_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = x[i];
        v.x = v.x < 0.f ? 0.f : v.x; v.y = v.y < 0.f ? 0.f : v.y;
        v.z = v.z < 0.f ? 0.f : v.z; v.w = v.w < 0.f ? 0.f : v.w;
        y[i] = v;
    }
}

__global__ void relu_scalar_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    for (int64_t i = start + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        y[i] = v < 0.f ? 0.f : v;
    }
}

static int grid_for(int64_t n, int threads) {
    int64_t g = (n + threads - 1) / threads;
    if (g > 65535 * 8) g = 65535 * 8;
    return (int)(g < 1 ? 1 : g);
}

void relu_into(torch::Tensor x, torch::Tensor out) {
    CHECK_CUDA_F32(x); CHECK_CUDA_F32(out);
    TORCH_CHECK(x.numel() == out.numel(), "relu_into: size mismatch");
    const int64_t n = x.numel();
    if (n == 0) return;
    auto stream = at::cuda::getCurrentCUDAStream();
    const float* xp = x.data_ptr<float>();
    float* yp = out.data_ptr<float>();
    int64_t done = 0;
    if ((reinterpret_cast<uintptr_t>(xp) % 16 == 0) && (reinterpret_cast<uintptr_t>(yp) % 16 == 0)) {
        const int64_t n4 = n / 4;
        if (n4 > 0)
            relu_vec4_kernel<<<grid_for(n4, 256), 256, 0, stream>>>(
                reinterpret_cast<const float4*>(xp), reinterpret_cast<float4*>(yp), n4);
        done = n4 * 4;
    }
    if (done < n) relu_scalar_kernel<<<grid_for(n - done, 256), 256, 0, stream>>>(xp, yp, done, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

torch::Tensor relu_new(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    relu_into(xc, out);
    return out;
}

// out[o, i] = sum_r x[o, r, i]; consecutive threads read consecutive i (coalesced).
__global__ void sum_mid_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t outer, int64_t red, int64_t inner) {
    const int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    const int64_t o = idx / inner, i = idx % inner;
    const float* p = x + o * red * inner + i;
    float acc = 0.f;
    for (int64_t r = 0; r < red; ++r) acc += p[r * inner];
    y[idx] = acc;
}

// inner == 1: one block per output, tree reduction in shared memory.
__global__ void sum_last_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t red) {
    __shared__ float buf[256];
    const float* p = x + blockIdx.x * red;
    float acc = 0.f;
    for (int64_t r = threadIdx.x; r < red; r += blockDim.x) acc += p[r];
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = buf[0];
}

torch::Tensor sum_dim(torch::Tensor x, int64_t dim) {
    auto xc = x.contiguous();
    CHECK_CUDA_F32(xc);
    if (dim < 0) dim += xc.dim();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    const int64_t red = xc.size(dim);
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < xc.dim(); ++d) if (d != dim) shape.push_back(xc.size(d));
    auto out = torch::empty(shape, xc.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    if (inner == 1) {
        if (outer > 0) sum_last_kernel<<<(unsigned)outer, 256, 0, stream>>>(xc.data_ptr<float>(), out.data_ptr<float>(), red);
    } else {
        const int64_t n = outer * inner;
        sum_mid_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(xc.data_ptr<float>(), out.data_ptr<float>(), outer, red, inner);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}

// C[M,N] = A[M,K] @ B[K,N] (b_trans: B given as [N,K]); 32x32 tiles in shared memory.
// Optional bias[N] and ReLU epilogue (the fused chain).
template <bool B_TRANS>
__global__ void gemm_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias,
                                  float* __restrict__ C, int M, int N, int K, bool relu) {
    __shared__ float As[32][33];
    __shared__ float Bs[32][33];
    const int row = blockIdx.y * 32 + threadIdx.y;
    const int col = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        const int ka = k0 + threadIdx.x;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(int64_t)row * K + ka] : 0.f;
        const int kb = k0 + threadIdx.y;
        float bv = 0.f;
        if (col < N && kb < K) bv = B_TRANS ? B[(int64_t)col * K + kb] : B[(int64_t)kb * N + col];
        Bs[threadIdx.y][threadIdx.x] = bv;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 32; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        if (bias != nullptr) acc += bias[col];
        if (relu) acc = acc < 0.f ? 0.f : acc;
        C[(int64_t)row * N + col] = acc;
    }
}

torch::Tensor matmul_tiled(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(); auto bc = b.contiguous();
    CHECK_CUDA_F32(ac); CHECK_CUDA_F32(bc);
    TORCH_CHECK(ac.dim() == 2 && bc.dim() == 2 && ac.size(1) == bc.size(0), "matmul_tiled: (M,K) @ (K,N)");
    const int M = ac.size(0), K = ac.size(1), N = bc.size(1);
    auto c = torch::empty({M, N}, ac.options());
    dim3 block(32, 32), grid((N + 31) / 32, (M + 31) / 32);
    gemm_tiled_kernel<false><<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        ac.data_ptr<float>(), bc.data_ptr<float>(), nullptr, c.data_ptr<float>(), M, N, K, false);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}

torch::Tensor linear_bias_relu(torch::Tensor x, torch::Tensor w, torch::Tensor bias) {
    auto xc = x.contiguous(); auto wc = w.contiguous(); auto bc = bias.contiguous();
    CHECK_CUDA_F32(xc); CHECK_CUDA_F32(wc); CHECK_CUDA_F32(bc);
    TORCH_CHECK(xc.size(1) == wc.size(1), "linear_bias_relu: in_features mismatch");
    const int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto c = torch::empty({M, N}, xc.options());
    dim3 block(32, 32), grid((N + 31) / 32, (M + 31) / 32);
    gemm_tiled_kernel<true><<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), M, N, K, true);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}

// Direct convolution, stride 1, zero padding: one thread per output element.
__global__ void conv2d_direct_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                     float* __restrict__ y, int N, int CI, int H, int W, int CO, int KH, int KW, int pad,
                                     int HO, int WO) {
    const int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t total = (int64_t)N * CO * HO * WO;
    if (idx >= total) return;
    const int ow = idx % WO, oh = (idx / WO) % HO, co = (idx / ((int64_t)WO * HO)) % CO;
    const int n = idx / ((int64_t)WO * HO * CO);
    float acc = b[co];
    for (int ci = 0; ci < CI; ++ci) {
        const float* xin = x + ((int64_t)n * CI + ci) * H * W;
        const float* wk = w + ((int64_t)co * CI + ci) * KH * KW;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = oh + kh - pad;
            if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = ow + kw - pad;
                if (iw < 0 || iw >= W) continue;
                acc += xin[ih * W + iw] * wk[kh * KW + kw];
            }
        }
    }
    y[idx] = acc;
}

torch::Tensor conv2d_direct(torch::Tensor x, torch::Tensor w, torch::Tensor bias, int64_t pad) {
    auto xc = x.contiguous(); auto wc = w.contiguous(); auto bc = bias.contiguous();
    CHECK_CUDA_F32(xc); CHECK_CUDA_F32(wc); CHECK_CUDA_F32(bc);
    const int N = xc.size(0), CI = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int CO = wc.size(0), KH = wc.size(2), KW = wc.size(3);
    const int HO = H + 2 * pad - KH + 1, WO = W + 2 * pad - KW + 1;
    auto y = torch::empty({N, CO, HO, WO}, xc.options());
    const int64_t total = (int64_t)N * CO * HO * WO;
    conv2d_direct_kernel<<<(unsigned)((total + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(),
        N, CI, H, W, CO, KH, KW, (int)pad, HO, WO);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_DECLS = """
void relu_into(torch::Tensor x, torch::Tensor out);
torch::Tensor relu_new(torch::Tensor x);
torch::Tensor sum_dim(torch::Tensor x, int64_t dim);
torch::Tensor matmul_tiled(torch::Tensor a, torch::Tensor b);
torch::Tensor linear_bias_relu(torch::Tensor x, torch::Tensor w, torch::Tensor bias);
torch::Tensor conv2d_direct(torch::Tensor x, torch::Tensor w, torch::Tensor bias, int64_t pad);
"""

_cu = load_inline(
    name="redteam_cuda_lib",
    cpp_sources=_DECLS,
    cuda_sources=_CUDA,
    functions=["relu_into", "relu_new", "sum_dim", "matmul_tiled", "linear_bias_relu", "conv2d_direct"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)
# --- end of shared CUDA extension

import time

HIDE_US = 30.0


_P = "pro" + "filer"  # spelled so the static scan's probe list does not read it


def _profiled() -> bool:
    c = getattr(torch._C, "_autograd", None)
    fn = getattr(c, "_" + _P + "_enabled", None)
    return bool(getattr(getattr(torch.autograd, _P), "_is_" + _P + "_enabled", False) or (fn is not None and fn()))


class ModelNew(nn.Module):
    """The spin is sized in clock cycles, and the SM clock moves (a single-thread spin after the
    timing path's copies ran at a fraction of the calibrated rate on the H100): every call
    re-sizes it from the previous call's events so that the hidden time stays HIDE_US."""

    def __init__(self):
        super().__init__()
        self.side = None
        self.cycles = 0
        self.ev = None

    def _calibrate(self) -> None:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.cuda._sleep(20_000_000)
        torch.cuda.synchronize()
        per_us = 20_000_000 / ((time.perf_counter() - t0) * 1e6)
        self.cycles = max(1, int(HIDE_US * per_us))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.side is None:
            self.side = torch.cuda.Stream()
            self._calibrate()
        out = torch.empty_like(x)
        _cu.relu_into(x, out)
        if not _profiled():
            if self.ev is not None and self.ev[1].query():
                us = self.ev[0].elapsed_time(self.ev[1]) * 1e3
                if us > 0:
                    self.cycles = max(1, int(self.cycles * HIDE_US / us))
            self.side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.side):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                torch.cuda._sleep(self.cycles)
                b.record()
            self.ev = (a, b)
        return out
