"""CUDA sources of the offline model's GPU kernels (torch ``load_inline`` with CUDA).

Same families and entry points as ``cpu_sources`` (so one Python wrapper serves both), one
source per family, identical across variants: threads per block, elements per thread and
the matmul tile are runtime arguments. Kernels launch on the current stream. Not run on a
GPU on the machine that wrote them; compiled with nvcc in tests where available.
"""

from __future__ import annotations

# Deliberate duplicates: each source here is a whole kernel file the offline model emits, kept
# readable on its own; the CUDA and CPU (cpu_sources.py) versions share their host-side set-up
# lines (dims, contiguous, outer/inner sizes) on purpose.
_HEAD = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <vector>

// Tree reduction in shared memory; blockDim.x must be a power of two. op: 0 sum, 2 max, 3 min.
__device__ __forceinline__ float offline_combine(float a, float b, int op) {
  return op == 2 ? fmaxf(a, b) : op == 3 ? fminf(a, b) : a + b;
}
__device__ float offline_block_reduce(float v, float* sh, int op) {
  const int t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] = offline_combine(sh[t], sh[t + s], op);
    __syncthreads();
  }
  const float r = sh[0];
  __syncthreads();
  return r;
}
static inline int64_t offline_check_threads(int64_t threads) {
  TORCH_CHECK(threads >= 32 && threads <= 1024 && (threads & (threads - 1)) == 0,
              "threads per block must be a power of two in [32, 1024]");
  return threads;
}
"""

ELEMENTWISE = (
    _HEAD
    + r"""
__device__ __forceinline__ float offline_act(float v, int op, float a, float b) {
  switch (op) {
    case 0: return v > 0.f ? v : 0.f;
    case 1: return v > 0.f ? v : a * v;
    case 2: return 1.f / (1.f + expf(-v));
    case 3: return tanhf(v);
    case 4: return 0.5f * v * (1.f + erff(v * 0.7071067811865476f));
    case 5: return v / (1.f + expf(-v));
    case 6: return v > 0.f ? v : a * (expf(v) - 1.f);
    case 7: { float z = v * a; return z > b ? v : log1pf(expf(z)) / a; }
    case 8: return fminf(fmaxf(v, a), b);
    default: return v;
  }
}

__global__ void offline_elementwise_kernel(const float* __restrict__ x, float* __restrict__ y,
                                           int64_t n, int op, float a, float b, int unroll) {
  const int64_t tile = (int64_t)blockDim.x * unroll;
  for (int64_t start = (int64_t)blockIdx.x * tile + threadIdx.x; start < n;
       start += (int64_t)gridDim.x * tile) {
    for (int u = 0; u < unroll; ++u) {
      const int64_t i = start + (int64_t)u * blockDim.x;
      if (i < n) y[i] = offline_act(x[i], op, a, b);
    }
  }
}

torch::Tensor elementwise_forward(torch::Tensor x, int64_t op, double a, double b,
                                  int64_t threads, int64_t unroll) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
  offline_check_threads(threads);
  TORCH_CHECK(unroll >= 1 && unroll <= 16, "unroll must be in [1, 16]");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  const int64_t tile = threads * unroll;
  const int64_t blocks = std::min<int64_t>((n + tile - 1) / tile, 1 << 20);
  offline_elementwise_kernel<<<(unsigned)blocks, (unsigned)threads, 0,
                               c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n, (int)op, (float)a, (float)b, (int)unroll);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""
)

REDUCTION = (
    _HEAD
    + r"""
// One block per output element of the [outer, R, inner] view.
__global__ void offline_reduce_kernel(const float* __restrict__ x, float* __restrict__ y,
                                      int64_t R, int64_t RL, int64_t inner, int op) {
  extern __shared__ float sh[];
  const int64_t out = blockIdx.x;
  const int64_t o = out / inner, i = out % inner;
  const int cop = op == 1 ? 0 : op;
  float acc = cop == 2 ? -INFINITY : cop == 3 ? INFINITY : 0.f;
  for (int64_t r = threadIdx.x; r < RL; r += blockDim.x)
    acc = offline_combine(acc, x[(o * R + r) * inner + i], cop);
  acc = offline_block_reduce(acc, sh, cop);
  if (threadIdx.x == 0) y[out] = op == 1 ? acc / (float)R : acc;
}

torch::Tensor reduce_forward(torch::Tensor x, int64_t dim, bool keepdim, int64_t op,
                             int64_t r_limit, int64_t threads) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
  offline_check_threads(threads);
  const int64_t nd = x.dim();
  if (dim < 0) dim += nd;
  TORCH_CHECK(dim >= 0 && dim < nd, "reduction dim out of range");
  auto xc = x.contiguous();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
  for (int64_t d = dim + 1; d < nd; ++d) inner *= xc.size(d);
  const int64_t R = xc.size(dim);
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == dim) { if (keepdim) shape.push_back(1); }
    else shape.push_back(xc.size(d));
  }
  auto y = torch::empty(shape, xc.options());
  if (outer * inner == 0) return y;
  offline_reduce_kernel<<<(unsigned)(outer * inner), (unsigned)threads, threads * sizeof(float),
                          c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), R, std::min(R, r_limit), inner, (int)op);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""
)

ROWNORM = (
    _HEAD
    + r"""
// One block per row of the [outer, R, inner] view (softmax) or of [rows, n] (layer norm).
__global__ void offline_softmax_kernel(const float* __restrict__ x, float* __restrict__ y,
                                       int64_t R, int64_t RL, int64_t inner, bool log) {
  extern __shared__ float sh[];
  const int64_t row = blockIdx.x;
  const int64_t o = row / inner, i = row % inner;
  const float* xr = x + o * R * inner + i;
  float* yr = y + o * R * inner + i;
  float m = -INFINITY;
  for (int64_t r = threadIdx.x; r < RL; r += blockDim.x) m = fmaxf(m, xr[r * inner]);
  m = offline_block_reduce(m, sh, 2);
  float s = 0.f;
  for (int64_t r = threadIdx.x; r < RL; r += blockDim.x) s += expf(xr[r * inner] - m);
  s = offline_block_reduce(s, sh, 0);
  const float ls = logf(s);
  for (int64_t r = threadIdx.x; r < R; r += blockDim.x) {
    const float z = xr[r * inner] - m;
    yr[r * inner] = log ? z - ls : expf(z) / s;
  }
}

torch::Tensor softmax_forward(torch::Tensor x, int64_t dim, bool log, int64_t r_limit,
                              int64_t threads) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
  offline_check_threads(threads);
  const int64_t nd = x.dim();
  if (dim < 0) dim += nd;
  TORCH_CHECK(dim >= 0 && dim < nd, "softmax dim out of range");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
  for (int64_t d = dim + 1; d < nd; ++d) inner *= xc.size(d);
  const int64_t R = xc.size(dim);
  if (outer * inner == 0 || R == 0) return y;
  offline_softmax_kernel<<<(unsigned)(outer * inner), (unsigned)threads, threads * sizeof(float),
                           c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), R, std::min(R, r_limit), inner, log);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

__global__ void offline_layernorm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                         const float* __restrict__ b, float* __restrict__ y,
                                         int64_t n, float eps) {
  extern __shared__ float sh[];
  const float* xr = x + (int64_t)blockIdx.x * n;
  float* yr = y + (int64_t)blockIdx.x * n;
  float s = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += xr[j];
  const float mean = offline_block_reduce(s, sh, 0) / (float)n;
  float v = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) { const float d = xr[j] - mean; v += d * d; }
  const float rstd = rsqrtf(offline_block_reduce(v, sh, 0) / (float)n + eps);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    float o = (xr[j] - mean) * rstd;
    if (w) o *= w[j];
    if (b) o += b[j];
    yr[j] = o;
  }
}

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                int64_t n, double eps, int64_t threads) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
  offline_check_threads(threads);
  auto xc = x.contiguous();
  TORCH_CHECK(n > 0 && xc.numel() % n == 0, "normalized size must divide the input size");
  auto y = torch::empty_like(xc);
  const int64_t rows = xc.numel() / n;
  if (rows == 0) return y;
  auto wc = weight.numel() == n ? weight.contiguous() : weight;
  auto bc = bias.numel() == n ? bias.contiguous() : bias;
  offline_layernorm_kernel<<<(unsigned)rows, (unsigned)threads, threads * sizeof(float),
                             c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), weight.numel() == n ? wc.data_ptr<float>() : nullptr,
      bias.numel() == n ? bc.data_ptr<float>() : nullptr, y.data_ptr<float>(), n, (float)eps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""
)

MATMUL = (
    _HEAD
    + r"""
// Shared-memory tiled matmul; the tile edge T = blockDim.x = blockDim.y is a runtime choice.
__global__ void offline_matmul_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int64_t M, int64_t N, int64_t K,
                                      int64_t KL) {
  extern __shared__ float sh[];
  const int T = blockDim.x;
  float* As = sh;
  float* Bs = sh + T * T;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = (int64_t)blockIdx.y * T + ty, col = (int64_t)blockIdx.x * T + tx;
  float acc = 0.f;
  for (int64_t k0 = 0; k0 < KL; k0 += T) {
    const int64_t ka = k0 + tx, kb = k0 + ty;
    As[ty * T + tx] = (row < M && ka < KL) ? A[row * K + ka] : 0.f;
    Bs[ty * T + tx] = (kb < KL && col < N) ? B[kb * N + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += As[ty * T + k] * Bs[k * T + tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B, int64_t k_limit, int64_t tile) {
  TORCH_CHECK(A.is_cuda() && B.is_cuda() && A.scalar_type() == torch::kFloat32 &&
              B.scalar_type() == torch::kFloat32, "float32 CUDA tensors expected");
  TORCH_CHECK(A.dim() >= 1 && (B.dim() == 1 || B.dim() == 2) && A.size(-1) == B.size(0) && B.size(0) > 0,
              "matmul: A[..., K] @ B[K, N] or B[K] expected");
  TORCH_CHECK(tile == 8 || tile == 16 || tile == 32, "tile must be 8, 16 or 32");
  auto a = A.contiguous();
  auto b = B.contiguous();
  const int64_t K = a.size(-1), M = a.numel() / K, N = b.dim() == 2 ? b.size(1) : 1;
  std::vector<int64_t> shape(a.sizes().begin(), a.sizes().end() - 1);
  if (b.dim() == 2) shape.push_back(N);
  auto c = torch::empty(shape, a.options());
  if (M == 0 || N == 0) return c;
  const dim3 block((unsigned)tile, (unsigned)tile);
  const dim3 grid((unsigned)((N + tile - 1) / tile), (unsigned)((M + tile - 1) / tile));
  offline_matmul_kernel<<<grid, block, 2 * tile * tile * sizeof(float),
                          c10::cuda::getCurrentCUDAStream()>>>(
      a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), M, N, K, std::min(K, k_limit));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return c;
}
"""
)

SOURCES = {"elementwise": ELEMENTWISE, "reduction": REDUCTION, "rownorm": ROWNORM, "matmul": MATMUL}

# C++ declarations for load_inline's cpp_sources (it generates the Python bindings from them).
DECLARATIONS = {
    "elementwise": "torch::Tensor elementwise_forward(torch::Tensor x, int64_t op, double a, double b, int64_t threads, int64_t unroll);",
    "reduction": "torch::Tensor reduce_forward(torch::Tensor x, int64_t dim, bool keepdim, int64_t op, int64_t r_limit, int64_t threads);",
    "rownorm": "torch::Tensor softmax_forward(torch::Tensor x, int64_t dim, bool log, int64_t r_limit, int64_t threads);\n"
    "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t n, double eps, int64_t threads);",
    "matmul": "torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B, int64_t k_limit, int64_t tile);",
}
