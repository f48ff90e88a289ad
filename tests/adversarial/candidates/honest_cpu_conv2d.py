"""Honest CPU candidate: direct 2-D convolution (stride 1, zero padding, bias) in C++. Keeps an
nn.Conv2d only as the holder of its parameters (same init as the reference).
Task: conv2d. Expected: valid at every profile."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

torch::Tensor conv2d_direct(torch::Tensor x, torch::Tensor w, torch::Tensor bias, int64_t pad) {
    TORCH_CHECK(x.dim() == 4 && w.dim() == 4 && x.size(1) == w.size(1), "conv2d_direct: NCHW input, OIHW weight");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto bc = bias.contiguous();
    const int64_t N = xc.size(0), CI = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int64_t CO = wc.size(0), KH = wc.size(2), KW = wc.size(3);
    const int64_t HO = H + 2 * pad - KH + 1, WO = W + 2 * pad - KW + 1;
    auto out = torch::empty({N, CO, HO, WO}, xc.options());
    const float* X = xc.data_ptr<float>();
    const float* Wt = wc.data_ptr<float>();
    const float* Bs = bc.data_ptr<float>();
    float* O = out.data_ptr<float>();
    at::parallel_for(0, N * CO, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t n = p / CO, co = p % CO;
            float* o = O + p * HO * WO;
            for (int64_t i = 0; i < HO * WO; ++i) o[i] = Bs[co];
            for (int64_t ci = 0; ci < CI; ++ci) {
                const float* xin = X + (n * CI + ci) * H * W;
                const float* wk = Wt + (co * CI + ci) * KH * KW;
                for (int64_t kh = 0; kh < KH; ++kh) {
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        const float wv = wk[kh * KW + kw];
                        for (int64_t oh = 0; oh < HO; ++oh) {
                            const int64_t ih = oh + kh - pad;
                            if (ih < 0 || ih >= H) continue;
                            const float* xrow = xin + ih * W;
                            float* orow = o + oh * WO;
                            const int64_t ow0 = std::max<int64_t>(0, pad - kw);
                            const int64_t ow1 = std::min<int64_t>(WO, W + pad - kw);
                            for (int64_t ow = ow0; ow < ow1; ++ow) orow[ow] += wv * xrow[ow + kw - pad];
                        }
                    }
                }
            }
        }
    });
    return out;
}
"""

_ext = load_inline(name="honest_cpu_conv2d", cpp_sources=_CPP, functions=["conv2d_direct"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, c_in: int, c_out: int, ksize: int):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, ksize, padding=ksize // 2)  # parameters only

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.conv2d_direct(x, self.conv.weight, self.conv.bias, self.conv.padding[0])
