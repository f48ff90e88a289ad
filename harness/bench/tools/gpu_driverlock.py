"""Do CUDA contexts being made and torn down on *other* GPUs slow the driver calls a judgement makes
while it holds its own GPU? (issue 27 goal 3: on four H200s the same conformance CUDA kernels held
a GPU a median 3.49 s against 1.72 s on one, with no run-queue wait and the same CPU time; their
arena requests, which only allocate, export and map device memory, went from 0.05 to 0.55 s.)

    python3 harness/bench/tools/gpu_driverlock.py --out OUT [--phase-s 15] [--rate 4]

A victim process on GPU 0 times, over and over, through the driver API (ctypes on libcuda, no
torch, so nothing else runs in it):

    alloc     cuMemAlloc + cuMemFree of 256 MiB (what an arena region's growth does)
    export    cuIpcGetMemHandle of a fresh 64 MiB allocation
    map       cuIpcOpenMemHandle + cuIpcCloseMemHandle of that handle in a second process on GPU 0
              (what the candidate worker does with each region)
    memset    cuMemsetD8 of 64 MiB + cuCtxSynchronize (a round trip through the GPU)
    context   a second process's primary context retained, used once and released (the close of
              a judgement's worker, minus Python); ``_conn1``: the same with
              CUDA_DEVICE_MAX_CONNECTIONS=1 (one hardware queue, fewer channels to make)

under phases: ``quiet``; ``other`` (churner processes on GPUs 1..N-1, each cycle a new process
that makes a context, allocates, writes and exits, paced to ``--rate`` contexts a second in
all, about what six judgements in flight per GPU on four GPUs start); ``other-max`` (the same
unpaced, four churners a GPU); ``same`` (the paced churn on GPU 0 itself, the one-GPU run's
case). Prints the median and p90 per operation per phase, and writes ``OUT/driverlock.json``.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MiB = 1 << 20


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


def _cuda() -> ctypes.CDLL:
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), _Handle, ctypes.c_uint]
    return lib


def _ok(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what}: CUresult {rc}")


def _context(lib: ctypes.CDLL) -> tuple[ctypes.c_void_p, int]:
    _ok(lib.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    _ok(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    _ok(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    _ok(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx, dev.value


def _alloc(lib: ctypes.CDLL, n: int) -> ctypes.c_uint64:
    p = ctypes.c_uint64()
    _ok(lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)), "cuMemAlloc")
    return p


def churn_once() -> None:
    """One churn cycle: a context on this process's GPU, 256 MiB written, then exit (teardown)."""
    lib = _cuda()
    _context(lib)
    p = _alloc(lib, 256 * MiB)
    _ok(lib.cuMemsetD8_v2(p, 1, ctypes.c_size_t(256 * MiB)), "cuMemsetD8")
    _ok(lib.cuCtxSynchronize(), "cuCtxSynchronize")


def churn_loop(gpu: str, period: float) -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu}
    while True:
        t0 = time.monotonic()
        subprocess.run([sys.executable, __file__, "churn-once"], env=env, check=False)
        time.sleep(max(0.0, period - (time.monotonic() - t0)))


def map_helper() -> None:
    """Reads hex handles on stdin; for each, opens and closes it; writes the seconds it took."""
    lib = _cuda()
    _context(lib)
    for line in sys.stdin:
        h = _Handle()
        ctypes.memmove(ctypes.addressof(h), bytes.fromhex(line.strip()), 64)
        p = ctypes.c_uint64()
        t0 = time.perf_counter()
        _ok(lib.cuIpcOpenMemHandle_v2(ctypes.byref(p), h, 1), "cuIpcOpenMemHandle")
        _ok(lib.cuIpcCloseMemHandle(p), "cuIpcCloseMemHandle")
        print(f"{time.perf_counter() - t0:.6f}", flush=True)


def context_once() -> None:
    lib = _cuda()
    t0 = time.perf_counter()
    _, dev = _context(lib)
    _alloc(lib, MiB)
    t1 = time.perf_counter()
    _ok(lib.cuDevicePrimaryCtxRelease_v2(dev), "cuDevicePrimaryCtxRelease")
    print(json.dumps({"make": t1 - t0, "release": time.perf_counter() - t1}), flush=True)


def victim(seconds: float, helper: subprocess.Popen) -> dict[str, list[float]]:
    lib = _cuda()
    _context(lib)
    got: dict[str, list[float]] = {k: [] for k in ("alloc", "export", "map", "memset", "context_make",
                                                   "context_release")}
    end = time.monotonic() + seconds
    env0 = {**os.environ, "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "0")}
    while time.monotonic() < end:
        t0 = time.perf_counter()
        p = _alloc(lib, 256 * MiB)
        _ok(lib.cuMemFree_v2(p), "cuMemFree")
        got["alloc"].append(time.perf_counter() - t0)
        p = _alloc(lib, 64 * MiB)
        h = _Handle()
        t0 = time.perf_counter()
        _ok(lib.cuIpcGetMemHandle(ctypes.byref(h), p), "cuIpcGetMemHandle")
        got["export"].append(time.perf_counter() - t0)
        helper.stdin.write(bytes(h).hex() + "\n")
        helper.stdin.flush()
        got["map"].append(float(helper.stdout.readline()))
        t0 = time.perf_counter()
        _ok(lib.cuMemsetD8_v2(p, 2, ctypes.c_size_t(64 * MiB)), "cuMemsetD8")
        _ok(lib.cuCtxSynchronize(), "cuCtxSynchronize")
        got["memset"].append(time.perf_counter() - t0)
        _ok(lib.cuMemFree_v2(p), "cuMemFree")
        if len(got["alloc"]) % 5 == 1:  # a context as the workers make it, and with one hardware queue
            for tag, extra in (("", {}), ("_conn1", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"})):
                r = subprocess.run([sys.executable, __file__, "context-once"], env={**env0, **extra},
                                   capture_output=True, text=True)
                if r.returncode == 0:
                    c = json.loads(r.stdout)
                    got.setdefault(f"context_make{tag}", []).append(c["make"])
                    got.setdefault(f"context_release{tag}", []).append(c["release"])
    return got


def _gpus() -> list[str]:
    out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True, text=True)
    return [x.strip() for x in out.stdout.split() if x.strip()]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("churn-once", "map-helper", "context-once"):
        {"churn-once": churn_once, "map-helper": map_helper, "context-once": context_once}[sys.argv[1]]()
        return
    if len(sys.argv) > 1 and sys.argv[1] == "churn-loop":
        churn_loop(sys.argv[2], float(sys.argv[3]))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--phase-s", type=float, default=15.0)
    p.add_argument("--rate", type=float, default=4.0, help="contexts a second made by the paced churners, in all")
    p.add_argument("--phases", default="quiet,other,other-max,same,quiet")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    gpus = _gpus()
    victim_gpu, others = gpus[0], gpus[1:]
    os.environ["CUDA_VISIBLE_DEVICES"] = victim_gpu
    helper = subprocess.Popen([sys.executable, __file__, "map-helper"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    result: dict[str, dict] = {}
    lines = [f"gpu_driverlock: GPUs {gpus}, victim GPU {victim_gpu}, {os.cpu_count()} CPUs, phases of {a.phase_s} s, "
             f"paced churn {a.rate} contexts/s, commit {os.environ.get('KH_COMMIT', '?')}"]
    for n, phase in enumerate(a.phases.split(",")):
        churners = []
        if phase in ("other", "same") and (others or phase == "same"):
            where = others if phase == "other" else [victim_gpu]
            k = 2 * len(where)  # two paced loops a GPU
            churners = [subprocess.Popen([sys.executable, __file__, "churn-loop", where[i % len(where)],
                                          str(k / a.rate)]) for i in range(k)]
        elif phase == "other-max" and others:
            churners = [subprocess.Popen([sys.executable, __file__, "churn-loop", g, "0"]) for g in others for _ in range(4)]
        time.sleep(2.0 if churners else 0.0)
        got = victim(a.phase_s, helper)
        for c in churners:
            c.kill()
        subprocess.run(["pkill", "-f", f"{Path(__file__).name} churn-once"], check=False)
        summ = {k: {"n": len(v), "median_ms": round(1e3 * statistics.median(v), 3),
                    "p90_ms": round(1e3 * sorted(v)[int(0.9 * (len(v) - 1))], 3)} for k, v in got.items() if v}
        result[f"{n}-{phase}"] = summ
        lines.append(f"{n}-{phase:9s} " + "  ".join(f"{k} {s['median_ms']:.2f}/{s['p90_ms']:.2f} ms (n {s['n']})"
                                                    for k, s in summ.items()))
        print(lines[-1], flush=True)
    helper.kill()
    (out / "driverlock.json").write_text(json.dumps(result, indent=1))
    (out / "summary.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
