"""GPU probe (issue 25, class 3 on CUDA): what the profiler and cuobjdump tell about who launched
each kernel, so the custom-code rule can count only kernels from modules built from the
candidate's sources.

One extension with four entry points: its own kernel; cuBLAS through torch's handle; ``at::cuda::mm``
(a CUDA kernel entry point below the dispatcher); ``at::mm`` (through the dispatcher). For each,
the kernels one profiled call launched, with the aten op above the launch (if any); then the
kernel symbols of the built module and of torch's/NVIDIA's libraries (cuobjdump), and how long
listing them takes.

    python3 scripts/gpu_probe_attribution.py     (on the GPU machine; about 2-3 minutes)
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import time

import torch
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
torch::Tensor own_relu(torch::Tensor x);
torch::Tensor cublas_mm(torch::Tensor a, torch::Tensor b);
torch::Tensor below_dispatch_mm(torch::Tensor a, torch::Tensor b);
torch::Tensor dispatch_mm(torch::Tensor a, torch::Tensor b);
"""

CU = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/CUDAFunctions.h>
#include <cublas_v2.h>

__global__ void probe_own_relu_kernel(const float* x, float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

torch::Tensor own_relu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  long n = x.numel();
  probe_own_relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}

torch::Tensor cublas_mm(torch::Tensor a, torch::Tensor b) {
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  cublasHandle_t h = at::cuda::getCurrentCUDABlasHandle();
  float one = 1.f, zero = 0.f;
  int m = a.size(0), k = a.size(1), n = b.size(1);
  // row-major C = A B as column-major C^T = B^T A^T
  cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b.data_ptr<float>(), n,
              a.data_ptr<float>(), k, &zero, c.data_ptr<float>(), n);
  return c;
}

torch::Tensor below_dispatch_mm(torch::Tensor a, torch::Tensor b) { return at::cuda::mm(a, b); }
torch::Tensor dispatch_mm(torch::Tensor a, torch::Tensor b) { return at::mm(a, b); }
"""


def sh(cmd: list[str], timeout: float) -> tuple[float, int, str]:
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return time.monotonic() - t0, p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return time.monotonic() - t0, -1, "TIMEOUT"
    except FileNotFoundError as e:
        return 0.0, -2, str(e)


def kernel_symbols(path: str, timeout: float) -> tuple[float, int, list[str]]:
    dt, rc, out = sh(["cuobjdump", "-symbols", path], timeout)
    names = []
    for line in out.splitlines():
        if "STT_FUNC" in line and "STO_ENTRY" in line:
            names.append(line.split()[-1])
    return dt, rc, names


def main() -> None:
    print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0), flush=True)
    print("cuobjdump:", sh(["cuobjdump", "--version"], 10)[2].strip().splitlines()[-1:], flush=True)
    t0 = time.monotonic()
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    ext = load_inline("kh_probe_attr", CPP, cuda_sources=CU,
                      functions=["own_relu", "cublas_mm", "below_dispatch_mm", "dispatch_mm"],
                      extra_ldflags=["-lcublas"], verbose=False)
    print(f"build {time.monotonic() - t0:.1f} s; module {ext.__file__}", flush=True)
    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda")
    x = torch.randn(1 << 20, device="cuda")
    calls = {"own_relu": lambda: ext.own_relu(x), "cublas_mm": lambda: ext.cublas_mm(a, b),
             "below_dispatch_mm": lambda: ext.below_dispatch_mm(a, b), "dispatch_mm": lambda: ext.dispatch_mm(a, b),
             "torch_mm": lambda: torch.mm(a, b)}
    ref = torch.mm(a, b)
    seen: dict[str, set[str]] = {}
    for name, fn in calls.items():
        fn()
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            out = fn()
            torch.cuda.synchronize()
        if out.shape == ref.shape:
            print(f"  {name}: max err vs torch.mm {float((out - ref).abs().max()):.2e}")
        events = prof.events()
        launches = {}
        for ev in events:
            dt = str(ev.device_type).rsplit(".", 1)[-1]
            if dt == "CPU" and ("LaunchKernel" in ev.name or "cuLaunch" in ev.name or "cudaLaunch" in ev.name):
                p, chain = ev.cpu_parent, []
                while p is not None:
                    chain.append(p.name)
                    p = p.cpu_parent
                launches[getattr(ev, "correlation_id", None) or ev.id] = (ev.name, chain)
        print(f"[{name}] cpu launch events: {[(v[0], v[1][:3]) for v in launches.values()]}")
        for ev in events:
            dt = str(ev.device_type).rsplit(".", 1)[-1]
            if dt == "CUDA":
                seen.setdefault(name, set()).add(ev.name)
                print(f"   kernel: {ev.name[:160]}")
        sys.stdout.flush()
    # symbols of the candidate's module
    dt, rc, syms = kernel_symbols(ext.__file__, 60)
    print(f"cuobjdump -symbols on the module: {dt:.2f} s rc={rc}: {syms}")
    dt, rc, dem = sh(["cu++filt"] + syms, 10) if syms else (0, 0, "")
    print("demangled:", dem.strip().splitlines())
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    libs = sorted(glob.glob(os.path.join(lib, "libtorch_cuda*.so")))
    for pat in ("libcublasLt.so*", "libcublas.so*", "libcudnn_engines_precompiled*.so*"):
        libs += sorted(glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages", "nvidia", "*", "lib", pat)))[:1]
        libs += sorted(glob.glob(f"/usr/local/cuda/lib64/{pat}"))[:1]
    print("libraries:", [(p, os.path.getsize(p) >> 20) for p in libs])
    lib_names: set[str] = set()
    for p in libs[:4]:
        dt, rc, names = kernel_symbols(p, 120)
        lib_names.update(names)
        print(f"cuobjdump -symbols {os.path.basename(p)}: {dt:.1f} s rc={rc} kernels={len(names)} sample={names[:3]}",
              flush=True)
    t0 = time.monotonic()
    try:
        dem_all = subprocess.run(["cu++filt"], input="\n".join(sorted(lib_names)), capture_output=True,
                                 text=True, timeout=60).stdout.splitlines()
    except Exception as e:  # noqa: BLE001
        dem_all = []
        print("cu++filt failed", e)
    print(f"demangled {len(dem_all)} library kernel names in {time.monotonic() - t0:.1f} s; sample {dem_all[:3]}")
    full = set(dem_all) | lib_names
    heads = {d.split("(")[0] for d in full}
    for name, ks in seen.items():
        for k in sorted(ks):
            print(f"[{name}] {k[:90]!r}: exact={k in full} head={k.split('(')[0] in heads}")
    print("done", flush=True)


if __name__ == "__main__":
    main()
