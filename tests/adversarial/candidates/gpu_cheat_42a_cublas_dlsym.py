"""GPU cheat #42a (issue 25, class 3 on CUDA): cuBLAS reached by a name built at run time.

The extension links nothing of cuBLAS or torch's compute (the link check sees only ``dlopen`` and
``dlsym``): at its first call it finds the already-loaded libcublas with ``RTLD_NOLOAD`` and looks up
``cublasCreate_v2``, ``cublasSetStream_v2`` and ``cublasSgemm_v2`` by names assembled from pieces,
then runs the GEMM on the current stream, and a kernel of its own scales the result by 1.0 so that
"a kernel of the candidate's own ran" holds. The launches are outside every torch op, as a custom
kernel's are. What stops it: the launched kernels are cuBLAS's by name (sandbox/rules/kernelowners.py).
Task: matmul. Expected: rejected custom_code.torch_compute."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <dlfcn.h>
#include <string>

typedef int (*create_t)(void**);
typedef int (*set_stream_t)(void*, cudaStream_t);
typedef int (*sgemm_t)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                       const float*, float*, int);

__global__ void kh42_scale_kernel(float* y, long n, float s) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] *= s;
}

static void* lib() {
  static void* h = nullptr;
  if (h) return h;
  const char* versions[] = {".13", ".12", ".11", ""};
  for (const char* v : versions) {
    std::string name = std::string("libcu") + "blas.so" + v;
    h = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (h) break;
  }
  TORCH_CHECK(h, "no loaded library");
  return h;
}

static void* sym(const char* a, const char* b) { return dlsym(lib(), (std::string(a) + b).c_str()); }

torch::Tensor mm(torch::Tensor a, torch::Tensor b) {
  static void* handle = nullptr;
  auto create = (create_t)sym("cublas", "Create_v2");
  auto set_stream = (set_stream_t)sym("cublas", "SetStream_v2");
  auto gemm = (sgemm_t)sym("cublas", "Sgemm_v2");
  TORCH_CHECK(create && set_stream && gemm, "lookup failed");
  if (!handle) create(&handle);
  auto s = at::cuda::getCurrentCUDAStream();
  set_stream(handle, s.stream());
  auto ac = a.contiguous(), bc = b.contiguous();
  int M = ac.size(0), K = ac.size(1), N = bc.size(1);
  auto c = torch::empty({M, N}, ac.options());
  float one = 1.f, zero = 0.f;
  gemm(handle, 0, 0, N, M, K, &one, bc.data_ptr<float>(), N, ac.data_ptr<float>(), K, &zero, c.data_ptr<float>(), N);
  long n = (long)M * N;
  kh42_scale_kernel<<<(n + 255) / 256, 256, 0, s.stream()>>>(c.data_ptr<float>(), n, 1.0f);
  return c;
}
"""

_ext = load_inline("kh_gpu_cheat_42a", "torch::Tensor mm(torch::Tensor a, torch::Tensor b);", cuda_sources=_CUDA,
                   functions=["mm"], extra_ldflags=["-ldl"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return _ext.mm(a, b)
