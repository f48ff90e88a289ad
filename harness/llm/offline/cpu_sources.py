"""C++ sources of the offline model's CPU kernels (torch ``load_inline``, no CUDA).

One source per op family, IDENTICAL for every variant of every op in the family: the
tunables (block, unroll, grain) and the op selector are runtime arguments, so the
evaluator's build cache compiles each family once. Every kernel is float32, single-threaded,
allocates its own output and does all arithmetic itself (no ATen compute ops).
"""

from __future__ import annotations

# Deliberate duplicates: whole kernel files, each readable on its own (see cuda_sources.py).

ELEMENTWISE = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>

static inline float offline_act(float v, int64_t op, float a, float b) {
  switch (op) {
    case 0: return v > 0.f ? v : 0.f;                                   // relu
    case 1: return v > 0.f ? v : a * v;                                 // leaky_relu
    case 2: return 1.f / (1.f + std::exp(-v));                          // sigmoid
    case 3: return std::tanh(v);                                        // tanh
    case 4: return 0.5f * v * (1.f + std::erf(v * 0.7071067811865476f)); // gelu (erf)
    case 5: return v / (1.f + std::exp(-v));                            // silu
    case 6: return v > 0.f ? v : a * (std::exp(v) - 1.f);               // elu
    case 7: { float z = v * a; return z > b ? v : std::log1p(std::exp(z)) / a; }  // softplus
    case 8: return std::min(std::max(v, a), b);                         // hardtanh
    default: return v;
  }
}

torch::Tensor elementwise_forward(torch::Tensor x, int64_t op, double a, double b,
                                  int64_t block, int64_t unroll) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "offline elementwise kernel: float32 only");
  TORCH_CHECK(block > 0 && unroll > 0, "block and unroll must be positive");
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const float* px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const int64_t n = xc.numel();
  const float fa = (float)a, fb = (float)b;
  for (int64_t start = 0; start < n; start += block) {
    const int64_t end = std::min(n, start + block);
    int64_t i = start;
    for (; i + unroll <= end; i += unroll)
      for (int64_t u = 0; u < unroll; ++u) po[i + u] = offline_act(px[i + u], op, fa, fb);
    for (; i < end; ++i) po[i] = offline_act(px[i], op, fa, fb);
  }
  return out;
}
"""

REDUCTION = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

// op: 0 sum, 1 mean, 2 max, 3 min. Reduces dim `dim` over its first `r_limit` entries.
torch::Tensor reduce_forward(torch::Tensor x, int64_t dim, bool keepdim, int64_t op,
                             int64_t r_limit, int64_t inner_block) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "offline reduction kernel: float32 only");
  const int64_t nd = x.dim();
  if (dim < 0) dim += nd;
  TORCH_CHECK(dim >= 0 && dim < nd, "reduction dim out of range");
  auto xc = x.contiguous();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
  for (int64_t d = dim + 1; d < nd; ++d) inner *= xc.size(d);
  const int64_t R = xc.size(dim);
  const int64_t RL = std::min(R, r_limit);
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == dim) { if (keepdim) shape.push_back(1); }
    else shape.push_back(xc.size(d));
  }
  auto out = torch::empty(shape, xc.options());
  const float* px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const int64_t ib = std::max<int64_t>(1, inner_block);
  std::vector<double> acc(ib);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i0 = 0; i0 < inner; i0 += ib) {
      const int64_t w = std::min(ib, inner - i0);
      for (int64_t j = 0; j < w; ++j)
        acc[j] = op == 2 ? -std::numeric_limits<double>::infinity()
               : op == 3 ? std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t r = 0; r < RL; ++r) {
        const float* row = px + (o * R + r) * inner + i0;
        for (int64_t j = 0; j < w; ++j) {
          const double v = row[j];
          if (op == 2) acc[j] = std::max(acc[j], v);
          else if (op == 3) acc[j] = std::min(acc[j], v);
          else acc[j] += v;
        }
      }
      for (int64_t j = 0; j < w; ++j)
        po[o * inner + i0 + j] = (float)(op == 1 ? acc[j] / (double)R : acc[j]);
    }
  }
  return out;
}
"""

ROWNORM = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>

// Softmax (or log-softmax) over dim; max and sum use the first r_limit entries.
torch::Tensor softmax_forward(torch::Tensor x, int64_t dim, bool log, int64_t r_limit,
                              int64_t block) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "offline softmax kernel: float32 only");
  const int64_t nd = x.dim();
  if (dim < 0) dim += nd;
  TORCH_CHECK(dim >= 0 && dim < nd, "softmax dim out of range");
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
  for (int64_t d = dim + 1; d < nd; ++d) inner *= xc.size(d);
  const int64_t R = xc.size(dim);
  const int64_t RL = std::min(R, r_limit);
  const float* px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  (void)block;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* row = px + o * R * inner + i;
      float* orow = po + o * R * inner + i;
      float m = -INFINITY;
      for (int64_t r = 0; r < RL; ++r) m = std::max(m, row[r * inner]);
      double s = 0.0;
      for (int64_t r = 0; r < RL; ++r) s += std::exp((double)row[r * inner] - m);
      const double ls = std::log(s);
      for (int64_t r = 0; r < R; ++r) {
        const double z = (double)row[r * inner] - m;
        orow[r * inner] = (float)(log ? z - ls : std::exp(z) / s);
      }
    }
  }
  return out;
}

// Layer norm over the last n elements of every row; weight/bias may be empty (no affine).
torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                                int64_t n, double eps, int64_t block) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "offline layer norm kernel: float32 only");
  auto xc = x.contiguous();
  TORCH_CHECK(n > 0 && xc.numel() % n == 0, "normalized size must divide the input size");
  auto out = torch::empty_like(xc);
  const bool affine = weight.numel() == n;
  auto wc = affine ? weight.contiguous() : weight;
  auto bc = (bias.numel() == n) ? bias.contiguous() : bias;
  const float* pw = affine ? wc.data_ptr<float>() : nullptr;
  const float* pb = bias.numel() == n ? bc.data_ptr<float>() : nullptr;
  const float* px = xc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const int64_t rows = xc.numel() / n;
  (void)block;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = px + r * n;
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += row[j];
    const double mean = s / (double)n;
    double v = 0.0;
    for (int64_t j = 0; j < n; ++j) { const double d = row[j] - mean; v += d * d; }
    const double rstd = 1.0 / std::sqrt(v / (double)n + eps);
    for (int64_t j = 0; j < n; ++j) {
      double y = (row[j] - mean) * rstd;
      if (pw) y *= pw[j];
      if (pb) y += pb[j];
      po[r * n + j] = (float)y;
    }
  }
  return out;
}
"""

MATMUL = r"""
#include <torch/extension.h>
#include <algorithm>
#include <vector>

// C = A[..., K] @ B[K, N] (or B[K]) over the first k_limit of K, blocked by tile (runtime).
torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B, int64_t k_limit, int64_t tile) {
  TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
              "offline matmul kernel: float32 only");
  TORCH_CHECK(A.dim() >= 1 && (B.dim() == 1 || B.dim() == 2) && A.size(-1) == B.size(0) && B.size(0) > 0,
              "matmul: A[..., K] @ B[K, N] or B[K] expected");
  auto a = A.contiguous();
  auto b = B.contiguous();
  const int64_t K = a.size(-1), M = a.numel() / K, N = b.dim() == 2 ? b.size(1) : 1;
  const int64_t KL = std::min(K, k_limit);
  std::vector<int64_t> shape(a.sizes().begin(), a.sizes().end() - 1);
  if (b.dim() == 2) shape.push_back(N);
  auto c = torch::empty(shape, a.options());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  for (int64_t i = 0; i < M * N; ++i) pc[i] = 0.f;
  const int64_t T = std::max<int64_t>(1, tile);
  for (int64_t i0 = 0; i0 < M; i0 += T)
    for (int64_t k0 = 0; k0 < KL; k0 += T)
      for (int64_t j0 = 0; j0 < N; j0 += T) {
        const int64_t i1 = std::min(M, i0 + T), k1 = std::min(KL, k0 + T), j1 = std::min(N, j0 + T);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t k = k0; k < k1; ++k) {
            const float av = pa[i * K + k];
            const float* brow = pb + k * N;
            float* crow = pc + i * N;
            for (int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
          }
      }
  return c;
}
"""

SOURCES = {"elementwise": ELEMENTWISE, "reduction": REDUCTION, "rownorm": ROWNORM, "matmul": MATMUL}
FUNCTIONS = {
    "elementwise": ["elementwise_forward"],
    "reduction": ["reduce_forward"],
    "rownorm": ["softmax_forward", "layernorm_forward"],
    "matmul": ["matmul_forward"],
}
