"""Level-2 fully custom: GEMM and bias + ReLU in its own C++ kernels (torch only transposes).
Task: gemm_bias_relu. Expected: valid under both rule sets."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>

// One extension for many conformance kernels: same source and flags, so one cached build.
static void check_f32(const torch::Tensor& t) {
    TORCH_CHECK(t.is_cpu() && t.scalar_type() == torch::kFloat32, "float32 CPU tensor expected");
}

torch::Tensor relu_fwd(torch::Tensor x) {
    check_f32(x);
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* s = xc.data_ptr<float>();
    float* d = out.data_ptr<float>();
    for (int64_t i = 0, n = xc.numel(); i < n; ++i) d[i] = s[i] > 0.f ? s[i] : 0.f;
    return out;
}

void relu_inplace(torch::Tensor y) {  // in place on a buffer the caller owns
    check_f32(y);
    TORCH_CHECK(y.is_contiguous(), "contiguous buffer expected");
    float* d = y.data_ptr<float>();
    for (int64_t i = 0, n = y.numel(); i < n; ++i) d[i] = d[i] > 0.f ? d[i] : 0.f;
}

torch::Tensor bias_relu(torch::Tensor y, torch::Tensor b) {
    check_f32(y); check_f32(b);
    auto yc = y.contiguous(); auto bc = b.contiguous();
    auto out = torch::empty_like(yc);
    const int64_t R = yc.size(0), C = yc.size(1);
    const float* Y = yc.data_ptr<float>(); const float* B = bc.data_ptr<float>();
    float* O = out.data_ptr<float>();
    for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < C; ++c) { float v = Y[r * C + c] + B[c]; O[r * C + c] = v > 0.f ? v : 0.f; }
    return out;
}

torch::Tensor matmul_fwd(torch::Tensor a, torch::Tensor b, double alpha) {
    check_f32(a); check_f32(b);
    auto ac = a.contiguous(); auto bc = b.contiguous();
    const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);
    TORCH_CHECK(bc.size(0) == K, "inner dimensions differ");
    auto out = torch::zeros({M, N}, ac.options());
    const float* A = ac.data_ptr<float>(); const float* B = bc.data_ptr<float>();
    float* C = out.data_ptr<float>();
    for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) {
            const float aik = A[i * K + k];
            for (int64_t j = 0; j < N; ++j) C[i * N + j] += aik * B[k * N + j];
        }
    if (alpha != 1.0) for (int64_t i = 0; i < M * N; ++i) C[i] *= static_cast<float>(alpha);
    return out;
}
"""

_ext = load_inline(name="conf_cpu_shared", cpp_sources=_CPP,
                   functions=["relu_fwd", "relu_inplace", "bias_relu", "matmul_fwd"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_f: int, out_f: int):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _ext.matmul_fwd(x, self.linear.weight.t().contiguous(), 1.0)
        return _ext.bias_relu(y, self.linear.bias)
