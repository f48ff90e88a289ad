#!/usr/bin/env python3
"""Where a load_inline build's compile time goes (issue 27, goal 2: a median compile <= 20 s).

    python3 harness/bench/tools/compile_breakdown.py --out DIR [--kernels N] [--jobs 1,16] [--deadline-s S]

For N small KernelBench-style load_inline kernels (elementwise relu, row reduction, shared-memory
tiled gemm+bias+relu under AT_DISPATCH; with -O3 in extra_cflags as most published ones have) it
writes main.cpp and cuda.cu as load_inline does and runs the compile / cuda_compile / link commands
of the build.ninja that the installed torch's cpp_extension writes, one step at a time, timing each
(wall and CPU seconds):

* main.cpp (pybind module, torch/extension.h): ``-E`` (preprocessing), ``-fsyntax-only`` (the
  front end: parsing the headers), ``-c``; ``-c`` without the candidate's -O; ``-c`` with
  torch/extension.h precompiled with the same flags (built under DIR, never in torch's tree);
* cuda.cu: ``nvcc -c --time``, split into nvcc's phases (preprocessing, cudafe++, cicc, ptxas,
  fatbinary, host gcc); variants: without torch/extension.h (the harness's KH_BUILD_LITE cut),
  the kernels alone under lighter headers (cuda_runtime.h only: the floor of a host/device
  split; ATen/core/Tensor.h; ATen/ATen.h), the host pass without the candidate's -O, --threads 0;
* the link, and ``load_inline`` end to end in a fresh process and build dir (ninja);
* J whole builds at once for each J of --jobs (both objects side by side, then the link, as
  ninja does): how parallel compile workers contend for the CPUs.

Writes DIR/compile-breakdown.json (every timing, command and the machine; after each phase) and
DIR/summary.txt (the table). No GPU needed; TORCH_CUDA_ARCH_LIST defaults to 9.0 (the harness sets
it to the GPUs present). With a CPU-only torch the link drops c10_cuda/torch_cuda and load_inline
end to end fails at its link (its time still covers both compiles).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import inspect
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")


class Kernel(NamedTuple):
    name: str
    decl: str  # cpp_sources
    device: str  # the __global__ code: needs only cuda_runtime.h
    launcher: str  # the torch-facing host function
    cflags: list[str]  # extra_cflags
    cuda_flags: list[str]  # extra_cuda_cflags


KERNELS = [
    Kernel("relu", "torch::Tensor relu_cuda(torch::Tensor x);", r"""
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}""", r"""
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}""", [], []),
    Kernel("rowsum", "torch::Tensor row_sum_cuda(torch::Tensor x);", r"""
__inline__ __device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}
__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float part[32];
    const float* row = x + (int64_t)blockIdx.x * cols;
    float v = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) v += row[c];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = warp_sum(threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.f);
        if (threadIdx.x == 0) y[blockIdx.x] = v;
    }
}""", r"""
torch::Tensor row_sum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "x must be a 2-D CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty({xc.size(0)}, xc.options());
    row_sum_kernel<<<xc.size(0), 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(1));
    return y;
}""", ["-O3"], ["-O3"]),
    Kernel("gemm_bias_relu", "torch::Tensor gemm_bias_relu_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b);",
           r"""
template <typename scalar_t>
__global__ void gemm_bias_relu_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ w,
                                      const scalar_t* __restrict__ b, scalar_t* __restrict__ y, int M, int N, int K) {
    __shared__ scalar_t xs[16][16], ws[16][17];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    scalar_t acc = 0;
    for (int t = 0; t < K; t += 16) {
        xs[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < K) ? x[(int64_t)row * K + t + threadIdx.x] : scalar_t(0);
        ws[threadIdx.y][threadIdx.x] = (col < N && t + threadIdx.y < K) ? w[(int64_t)col * K + t + threadIdx.y] : scalar_t(0);
        __syncthreads();
        for (int k = 0; k < 16; ++k) acc += xs[threadIdx.y][k] * ws[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) { scalar_t v = acc + b[col]; y[(int64_t)row * N + col] = v > scalar_t(0) ? v : scalar_t(0); }
}
template __global__ void gemm_bias_relu_kernel<float>(const float*, const float*, const float*, float*, int, int, int);
template __global__ void gemm_bias_relu_kernel<double>(const double*, const double*, const double*, double*, int, int,
                                                       int);""", r"""
torch::Tensor gemm_bias_relu_cuda(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto xc = x.contiguous(), wc = w.contiguous(), bc = b.contiguous();
    int M = xc.size(0), K = xc.size(1), N = wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
    AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "gemm_bias_relu", [&] {
        gemm_bias_relu_kernel<scalar_t><<<grid, block>>>(xc.data_ptr<scalar_t>(), wc.data_ptr<scalar_t>(),
                                                         bc.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), M, N, K);
    });
    return y;
}""", ["-O3"], ["-O3", "--use_fast_math"]),
]
CU_PREFIX = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"  # what load_inline prepends
EXT_H = "#include <torch/extension.h>\n"  # what published cuda_sources start with
NVCC_PHASES = (("preprocess", "gcc (preprocessing"), ("cudafe++", "cudafe++"), ("cicc", "cicc"), ("ptxas", "ptxas"),
               ("fatbinary", "fatbinary"), ("host gcc", "gcc (compiling"))
# CUDA_HOME for a CPU-only torch (a CUDA torch finds it itself; its nvcc is what the harness runs)
FIX_CUDA_HOME = ("ce.CUDA_HOME = ce.CUDA_HOME or os.environ.get('CUDA_HOME') or "
                 "('/usr/local/cuda' if os.path.isdir('/usr/local/cuda') else ce._find_cuda_home())")


def fn_name(k: Kernel) -> str:
    return re.search(r"(\w+)\(", k.decl)[1]


def main_cpp(k: Kernel) -> str:  # load_inline's main.cpp: the header, cpp_sources, the pybind module
    f = fn_name(k)
    return (f"#include <torch/extension.h>\n{k.decl}\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{\n"
            f'm.def("{f}", torch::wrap_pybind_function({f}), "{f}");\n}}')


def cuda_src(k: Kernel) -> str:  # cuda_sources as published (load_inline prepends CU_PREFIX)
    return f"{EXT_H}#include <cuda_runtime.h>\n{k.device}\n{k.launcher}\n"


def _ce():
    from torch.utils import cpp_extension as ce

    exec(FIX_CUDA_HOME, {"ce": ce, "os": os})
    return ce


def _kw(fn, **kw):  # call a torch helper with the keywords its version takes (sycl ones came in 2.7)
    return fn(**{a: v for a, v in kw.items() if a in inspect.signature(fn).parameters})


def commands(k: Kernel, name: str, d: Path, cflags=None, cuda_flags=None) -> dict:
    """The compile, cuda_compile and link argv of torch's build.ninja for ``k`` built in ``d``;
    writes main.cpp and cuda.cu there."""
    import torch

    ce = _ce()
    ld = _kw(ce._prepare_ldflags, extra_ldflags=[], with_cuda=True, with_sycl=False, verbose=False, is_standalone=False)
    dropped = [f for f in ld if f in ("-lc10_cuda", "-ltorch_cuda")
               and not os.path.exists(os.path.join(ce.TORCH_LIB_PATH, f"lib{f[2:]}.so"))]
    d.mkdir(parents=True, exist_ok=True)
    (d / "main.cpp").write_text(main_cpp(k))
    (d / "cuda.cu").write_text(CU_PREFIX + cuda_src(k))
    _kw(ce._write_ninja_file_to_build_library, path=str(d / "build.ninja"), name=name,
        sources=[str(d / "main.cpp"), str(d / "cuda.cu")], extra_cflags=list(k.cflags if cflags is None else cflags),
        extra_cuda_cflags=list(k.cuda_flags if cuda_flags is None else cuda_flags), extra_sycl_cflags=[],
        extra_ldflags=[f for f in ld if f not in dropped], extra_include_paths=[], with_cuda=True, with_sycl=False,
        is_standalone=False)
    var, rules, rule = {}, {}, ""
    for line in (d / "build.ninja").read_text().splitlines():
        if line.startswith("rule "):
            rule = line.split()[1]
        elif line.startswith("  command = "):
            rules[rule] = line.split(" = ", 1)[1]
        elif " = " in line and not line.startswith((" ", "build ")):
            var.__setitem__(*line.split(" = ", 1))
    md_added = torch.version.cuda is None and "-MD" not in rules["cuda_compile"]
    if md_added:  # a CUDA torch's rule has nvcc write a dependency file too (one more preprocessing pass)
        rules["cuda_compile"] = rules["cuda_compile"].replace("$nvcc ", "$nvcc -MD -MF $out.d ", 1)

    def sub(rule: str, ins: list[str], out: str) -> list[str]:
        io = {"in": " ".join(str(d / i) for i in ins), "out": str(d / out)}
        return shlex.split(re.sub(r"\$(\w+)", lambda m: io.get(m[1], var.get(m[1], "")), rules[rule]))
    return {"main": sub("compile", ["main.cpp"], "main.o"), "cuda": sub("cuda_compile", ["cuda.cu"], "cuda.cuda.o"),
            "link": sub("link", ["main.o", "cuda.cuda.o"], f"{name}.so"), "link_dropped": dropped, "nvcc_md_added": md_added}


def timed(argv: list[str], log: Path) -> dict:
    """Run one command: its wall and CPU (user+sys, its children included) seconds."""
    t0 = time.perf_counter()
    with open(log, "w") as f:
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    r = {"wall_s": round(time.perf_counter() - t0, 3), "cpu_s": round(ru.ru_utime + ru.ru_stime, 3),
         "rss_mb": ru.ru_maxrss // 1024, "rc": p.returncode}
    return {**r, "tail": log.read_text(errors="replace")[-600:]} if p.returncode else r


def nvcc_timed(argv: list[str], log: Path) -> dict:
    csv = log.with_suffix(".csv")
    csv.unlink(missing_ok=True)
    r, phases = timed([argv[0], "--time", str(csv), *argv[1:]], log), {}
    for row in csv.read_text().splitlines()[1:] if csv.exists() else []:
        c = [x.strip() for x in row.split(",")]
        if len(c) >= 8 and c[-1] == "ms":
            key = next((k for k, p in NVCC_PHASES if c[1].startswith(p)), "other")
            phases[key] = round(phases.get(key, 0.0) + float(c[-2]) / 1000, 3)
    return {**r, "phases": phases}


def edit(argv: list[str], c: list[str] | None = None, out: str | None = "", nodeps: bool = False) -> list[str]:
    """argv with "-c" replaced by ``c``, "-o X" by "-o out" (None: no -o), -MMD/-MD -MF X dropped."""
    res, it = [], iter(argv)
    for a in it:
        if nodeps and a in ("-MMD", "-MD", "-MF"):
            _ = a == "-MF" and next(it)
        elif a == "-o" and out != "":
            res += ["-o", out] if next(it) and out else []
        else:
            res += c if a == "-c" and c is not None else [a]
    return res


def o_free(flags: list[str]) -> list[str]:
    return [f for f in flags if not re.fullmatch(r"-O\d?|-Ofast", f)]


class Bench:
    def __init__(self, out: Path, deadline: float):
        self.out, self.deadline, self.pch = out, deadline, {}
        self.lock, self.pch_lock = threading.Lock(), threading.Lock()  # --parallel: kernels side by side
        self.rec: dict = {"machine": machine(), "kernels": {}, "contention": {}, "pch_build": {}, "skipped": []}

    def left(self, what: str) -> bool:
        ok = time.monotonic() < self.deadline
        with self.lock:
            self.rec["skipped"] += [] if ok else [what]
        return ok

    def save(self) -> None:
        with self.lock:
            (self.out / "compile-breakdown.json").write_text(json.dumps(self.rec, indent=1))

    def pch_header(self, k: Kernel, main_argv: list[str]) -> Path | None:
        """torch/extension.h precompiled with main.cpp's flags (one per extra_cflags), under DIR."""
        key = " ".join(k.cflags) or "(none)"
        with self.pch_lock:
            return self.pch[key] if key in self.pch else self._build_pch(key, main_argv)

    def _build_pch(self, key: str, main_argv: list[str]) -> Path | None:
        d = self.out / "pch" / str(len(self.pch))
        d.mkdir(parents=True, exist_ok=True)
        (d / "kh_extension.h").write_text(EXT_H)
        argv = [a for a in edit(main_argv, nodeps=True) if not a.startswith("-DTORCH_EXTENSION_NAME=")]
        argv = argv[:argv.index("-c")] + ["-x", "c++-header", str(d / "kh_extension.h"), "-o", f"{d}/kh_extension.h.gch"]
        r = timed(argv, d / "build.log")
        with self.lock:
            self.rec["pch_build"][key] = r
        self.pch[key] = d / "kh_extension.h" if r["rc"] == 0 else None
        return self.pch[key]

    def breakdown(self, k: Kernel) -> None:
        if not self.left(f"breakdown {k.name}"):
            return
        d = self.out / "steps" / k.name
        cmd = commands(k, k.name, d)
        r = {"cflags": k.cflags, "cuda_flags": k.cuda_flags, "steps": {}, "cuda_variants": {},
             **{f"{s}_argv": shlex.join(cmd[s]) for s in ("main", "cuda", "link")},
             "link_dropped": cmd["link_dropped"], "nvcc_md_added": cmd["nvcc_md_added"]}
        s, m = r["steps"], cmd["main"]
        s["main -E"] = timed(edit(m, ["-E"], str(d / "main.ii"), nodeps=True), d / "E.log")
        s["main -E"]["lines"] = len((d / "main.ii").read_text(errors="replace").splitlines()) if (d / "main.ii").exists() else 0
        s["main -fsyntax-only"] = timed(edit(m, ["-fsyntax-only"], None, nodeps=True), d / "syntax.log")
        s["main -c"] = timed(m, d / "main.log")
        if k.cflags != o_free(k.cflags):  # main.cpp is pybind glue: what does the candidate's -O cost there?
            s["main -c no -O"] = timed(commands(k, k.name, d / "o0", cflags=o_free(k.cflags))["main"], d / "main-o0.log")
        if (h := self.pch_header(k, m)) is not None:
            s["main -c +pch"] = timed(edit(m, ["-include", str(h), "-Winvalid-pch", "-H", "-c"]), d / "pch.log")
            s["main -c +pch"]["pch_used"] = f"! {h}.gch" in (d / "pch.log").read_text(errors="replace")
        s["cuda -c"] = nvcc_timed(cmd["cuda"], d / "cuda.log")
        s["link"] = timed(cmd["link"], d / "link.log")
        s["load_inline"] = self.end_to_end(k)
        with self.lock:
            self.rec["kernels"][k.name] = r
        self.save()
        print(k.name, {step: v["wall_s"] for step, v in s.items()}, flush=True)

    def end_to_end(self, k: Kernel) -> dict:
        d = self.out / "e2e" / k.name
        d.mkdir(parents=True, exist_ok=True)
        args = json.dumps([f"{k.name}_e2e", k.decl, cuda_src(k), fn_name(k), k.cflags, k.cuda_flags, str(d)])
        code = ("import json, os, sys, time\nfrom torch.utils import cpp_extension as ce\n"
                f"{FIX_CUDA_HOME}\nce.remove_extension_h_precompiler_headers = lambda: None  # leave torch's tree be\n"
                "n, cpp, cu, f, cfl, cufl, d = json.loads(sys.argv[1]); t = time.perf_counter(); err = ''\n"
                "try:\n    ce.load_inline(n, cpp, cu, functions=[f], extra_cflags=cfl, extra_cuda_cflags=cufl, "
                "build_directory=d, verbose=False)\nexcept Exception as e:\n    err = str(e)[-400:]\n"
                "print(json.dumps({'load_inline_s': round(time.perf_counter() - t, 3), 'error': err}))\n")
        r = timed([sys.executable, "-c", code, args], d / "run.log")
        try:
            r.update(json.loads((d / "run.log").read_text().strip().splitlines()[-1]))
        except (ValueError, IndexError):
            pass
        return {**r, "ok": r["rc"] == 0 and not r.get("error")}

    def variants(self, k: Kernel, first: bool) -> None:
        """cuda.cu under lighter headers, the host pass without -O, --threads 0 (first kernel: all)."""
        bare = "#include <cuda_runtime.h>\n" + k.device + "\n"
        cases = {"lite (no torch/extension.h)": (CU_PREFIX + cuda_src(k).replace(EXT_H, ""), None, []),
                 "floor: kernels, cuda_runtime.h only": (bare, None, [])}
        if first:
            cases |= {f"kernels + <{h}>": (f"#include <{h}>\n" + bare, None, []) for h in ("ATen/core/Tensor.h", "ATen/ATen.h")}
            cases["--threads 0"] = (None, None, ["--threads", "0"])
        if k.cuda_flags != o_free(k.cuda_flags):
            cases["host pass without -O"] = (None, o_free(k.cuda_flags), [])
        for i, (label, (src, flags, extra)) in enumerate(cases.items()):
            if self.left(f"variant {k.name} {label}"):
                d = self.out / "variants" / k.name / str(i)
                argv = commands(k, k.name, d, cuda_flags=flags)["cuda"]
                if src:
                    (d / "cuda.cu").write_text(src)
                self.rec["kernels"][k.name]["cuda_variants"][label] = nvcc_timed(argv[:1] + extra + argv[1:], d / "cuda.log")
                self.save()

    def contention(self, jobs: int, kernels: list[Kernel]) -> None:
        def one(i: int, k: Kernel) -> dict:
            d = self.out / "contention" / f"j{jobs}" / f"{i}_{k.name}"
            cmd, t0 = commands(k, f"{k.name}_{i}", d), time.perf_counter()
            with cf.ThreadPoolExecutor(2) as ex:  # ninja builds both objects at once
                rm, rc = ex.submit(timed, cmd["main"], d / "main.log"), ex.submit(timed, cmd["cuda"], d / "cuda.log")
                rm, rc = rm.result(), rc.result()
            rl = timed(cmd["link"], d / "link.log")
            return {"kernel": k.name, "wall_s": round(time.perf_counter() - t0, 3), "main": rm, "cuda": rc, "link": rl,
                    "cpu_s": round(rm["cpu_s"] + rc["cpu_s"] + rl["cpu_s"], 3), "rc": rm["rc"] or rc["rc"]}
        t0 = time.perf_counter()
        with cf.ThreadPoolExecutor(jobs) as ex:
            n = jobs if jobs > 1 else len(kernels)  # one at a time: each kernel once
            res = list(ex.map(one, range(n), [kernels[i % len(kernels)] for i in range(n)]))
        w = [b["wall_s"] for b in res]
        self.rec["contention"][str(jobs)] = {"median_build_s": statistics.median(w), "max_build_s": max(w),
                                             "round_wall_s": round(time.perf_counter() - t0, 3),
                                             "median_cpu_s": statistics.median(b["cpu_s"] for b in res), "builds": res}


def machine() -> dict:
    def out(argv: list[str]) -> list[str]:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.strip().splitlines()
        except OSError as e:
            return [f"unavailable: {e}"]
    import torch

    ce = _ce()
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    return {"cpu_model": cpu, "cpu_count": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)),
            "loadavg_start": os.getloadavg(), "python": sys.version.split()[0], "torch": torch.__version__,
            "torch_cuda": torch.version.cuda, "cuda_home": ce.CUDA_HOME, "cxx": out([ce.get_cxx_compiler(), "--version"])[:1],
            "nvcc": out([os.path.join(ce.CUDA_HOME or "", "bin", "nvcc"), "--version"])[-2:],
            "arch_list": os.environ["TORCH_CUDA_ARCH_LIST"], "max_jobs": os.environ.get("MAX_JOBS")}


def table(rec: dict) -> str:
    cols = ["main -E", "main -fsyntax-only", "main -c", "main -c no -O", "main -c +pch", "cuda -c", "link"]
    ph = [p for p, _ in NVCC_PHASES]
    heads = ["cpp -E", "cpp fe", "cpp -c", "cpp noO", "cpp pch", "cu -c", "link", "cu pre", "cudafe", "cicc", "ptxas",
             "fatbin", "cu host", "sum", "ninja", "e2e"]
    lines = ["seconds (wall; then CPU). cpp = main.cpp: -E, fe = -fsyntax-only, -c, noO = -c without the candidate's -O,",
             "pch = -c with precompiled torch/extension.h; cu = cuda.cu: nvcc -c, then its phases (pre = preprocessing,",
             "host = host gcc; nvcc's own clock in both rows); sum = cpp -c + cu -c + link, share = of sum;",
             "ninja = max(cpp -c, cu -c) + link (load_inline builds both objects at once);",
             "e2e = load_inline in a fresh process and build dir", f"{'kernel':15} " + " ".join(f"{h:>8}" for h in heads)]
    for name, r in rec["kernels"].items():
        s = r["steps"]
        for unit in ("wall_s", "cpu_s"):
            w = {c: s[c][unit] for c in cols if c in s}
            tot = sum(w.get(c, 0) for c in ("main -c", "cuda -c", "link")) or 1.0
            cells = [w.get(c) for c in cols] + [s.get("cuda -c", {}).get("phases", {}).get(p) for p in ph]
            cells += [tot, max(w.get("main -c", 0), w.get("cuda -c", 0)) + w.get("link", 0)]
            cells += [s.get("load_inline", {}).get("load_inline_s" if unit == "wall_s" else "cpu_s")]
            lines.append(f"{name if unit == 'wall_s' else '  cpu':15} " + " ".join("       -" if x is None else f"{x:8.2f}" for x in cells))
            if unit == "wall_s":
                lines.append(f"{'  share':15} " + " ".join("        " if x is None else f"{x / tot:8.0%}" for x in cells[:-3]))
        for label, v in r["cuda_variants"].items():
            lines.append(f"  cuda.cu {label}: {v['wall_s']:.2f} s wall, {v['cpu_s']:.2f} s CPU, rc {v['rc']} "
                         f"(as published: {s['cuda -c']['wall_s']:.2f} s); phases {v['phases']}")
    for j, c in rec["contention"].items():
        lines.append(f"{j} build(s) at once: median build {c['median_build_s']:.1f} s, max {c['max_build_s']:.1f} s, "
                     f"all done in {c['round_wall_s']:.1f} s, median CPU {c['median_cpu_s']:.1f} s per build")
    lines += [f"pch build (extra_cflags {key}): {p['wall_s']:.1f} s, rc {p['rc']}" for key, p in rec["pch_build"].items()]
    return "\n".join(lines + ([f"skipped (deadline): {', '.join(rec['skipped'])}"] if rec["skipped"] else []))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--kernels", type=int, default=len(KERNELS), help=f"how many of the {len(KERNELS)} kernels")
    ap.add_argument("--jobs", default="1,cpus", help="builds at once, comma-separated; 'cpus': the CPU count")
    ap.add_argument("--parallel", type=int, default=1, help="kernels broken down side by side (with >= 4 idle "
                    "cores per kernel the one-process steps barely contend)")
    ap.add_argument("--deadline-s", type=float, default=7200.0, help="skip what is left after this many seconds")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    b, ks = Bench(a.out, time.monotonic() + a.deadline_s), KERNELS[:max(1, a.kernels)]
    with cf.ThreadPoolExecutor(a.parallel) as ex:  # the breakdown, then contention (most first), then the variants
        list(ex.map(b.breakdown, ks))
    for j in sorted({(os.cpu_count() or 1) if x == "cpus" else int(x) for x in a.jobs.split(",")}, reverse=True):
        if b.left(f"contention {j}"):
            b.contention(j, ks)
            b.save()
            print(f"{j} at once: median build {b.rec['contention'][str(j)]['median_build_s']:.1f} s", flush=True)
    for i, k in enumerate(k for k in ks if k.name in b.rec["kernels"]):
        b.variants(k, first=i == 0)
    b.rec["machine"]["loadavg_end"] = os.getloadavg()
    b.save()
    (a.out / "summary.txt").write_text(table(b.rec) + "\n")
    print(table(b.rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
