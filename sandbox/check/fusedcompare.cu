// The tolerance rule's all-finite pass (sandbox/check/compare.py, _finite_chunk) in one read of
// both outputs: per element, in float64 and with the same IEEE operations in the same order
// (explicit round-to-nearest intrinsics, so no multiply-add is ever contracted):
//   d = |o - r|, a = |r|, t = a * rtol + atol, bad = d > t,
//   running max of d, of d / (a + 1) and of d / max(a, 1e-12),
//   count of bad elements, first bad index, count of elements where o or r is not finite.
// Each block writes its partials; the caller reduces them (max, sum, min: exact in any order).
// Built once per machine by the parent (sandbox/check/fusedcompare.py) and called by the trusted
// reference worker through ctypes with device pointers and the current stream.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define KH_THREADS 256

template <typename T> __device__ __forceinline__ double kh_to_d(T x);
template <> __device__ __forceinline__ double kh_to_d<float>(float x) { return (double)x; }
template <> __device__ __forceinline__ double kh_to_d<double>(double x) { return x; }
template <> __device__ __forceinline__ double kh_to_d<__half>(__half x) { return (double)__half2float(x); }
template <> __device__ __forceinline__ double kh_to_d<__nv_bfloat16>(__nv_bfloat16 x) {
    return (double)__bfloat162float(x);
}

template <typename T>
__global__ void kh_cmp_kernel(const T* __restrict__ o, const T* __restrict__ r, long long n, double atol,
                              double rtol, double* pmax, long long* pcnt, long long* pfirst) {
    double m0 = 0.0, m1 = 0.0, m2 = 0.0;
    long long bad = 0, nonfin = 0, first = n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double ov = kh_to_d<T>(o[i]), rv = kh_to_d<T>(r[i]);
        if (!isfinite(ov) || !isfinite(rv)) {
            nonfin++;
            continue;
        }
        const double d = fabs(__dsub_rn(ov, rv));
        const double a = fabs(rv);
        const double t = __dadd_rn(__dmul_rn(a, rtol), atol);
        if (d > t) {
            bad++;
            if (i < first) first = i;
        }
        m0 = fmax(m0, d);
        m1 = fmax(m1, __ddiv_rn(d, __dadd_rn(a, 1.0)));
        m2 = fmax(m2, __ddiv_rn(d, fmax(a, 1e-12)));
    }
    __shared__ double s0[KH_THREADS], s1[KH_THREADS], s2[KH_THREADS];
    __shared__ long long sb[KH_THREADS], sn[KH_THREADS], sf[KH_THREADS];
    const int k = threadIdx.x;
    s0[k] = m0, s1[k] = m1, s2[k] = m2, sb[k] = bad, sn[k] = nonfin, sf[k] = first;
    __syncthreads();
    for (int h = KH_THREADS / 2; h > 0; h >>= 1) {
        if (k < h) {
            s0[k] = fmax(s0[k], s0[k + h]);
            s1[k] = fmax(s1[k], s1[k + h]);
            s2[k] = fmax(s2[k], s2[k + h]);
            sb[k] += sb[k + h];
            sn[k] += sn[k + h];
            sf[k] = sf[k] < sf[k + h] ? sf[k] : sf[k + h];
        }
        __syncthreads();
    }
    if (k == 0) {
        const int b = blockIdx.x;
        pmax[3 * b] = s0[0], pmax[3 * b + 1] = s1[0], pmax[3 * b + 2] = s2[0];
        pcnt[2 * b] = sb[0], pcnt[2 * b + 1] = sn[0];
        pfirst[b] = sf[0];
    }
}

// dtype: 0 float32, 1 float64, 2 float16, 3 bfloat16. Returns a cudaError_t (0: launched).
extern "C" int kh_cmp(int device, const void* o, const void* r, int dtype, long long n, double atol, double rtol,
                      double* pmax, long long* pcnt, long long* pfirst, int blocks, void* stream) {
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return (int)e;
    cudaStream_t s = (cudaStream_t)stream;
    switch (dtype) {
        case 0:
            kh_cmp_kernel<float><<<blocks, KH_THREADS, 0, s>>>((const float*)o, (const float*)r, n, atol, rtol,
                                                               pmax, pcnt, pfirst);
            break;
        case 1:
            kh_cmp_kernel<double><<<blocks, KH_THREADS, 0, s>>>((const double*)o, (const double*)r, n, atol, rtol,
                                                                pmax, pcnt, pfirst);
            break;
        case 2:
            kh_cmp_kernel<__half><<<blocks, KH_THREADS, 0, s>>>((const __half*)o, (const __half*)r, n, atol, rtol,
                                                                pmax, pcnt, pfirst);
            break;
        case 3:
            kh_cmp_kernel<__nv_bfloat16><<<blocks, KH_THREADS, 0, s>>>(
                (const __nv_bfloat16*)o, (const __nv_bfloat16*)r, n, atol, rtol, pmax, pcnt, pfirst);
            break;
        default:
            return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}
