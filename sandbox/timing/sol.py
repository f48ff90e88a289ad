"""Speed of light: the device's measured peaks (once per device, cached) and a candidate's
percentage of them, from the task's META FLOPs / bytes formulas.

Peaks are measured by the trusted reference worker (``peaks`` request): a large device copy
(bandwidth = 2 x bytes / time), a big fp32 matmul with TF32 off, and a bf16 matmul. They
are cached as JSON next to the build cache, keyed by the device name and torch version.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any


def measure(torch: Any, device: Any) -> dict[str, float]:
    """Runs inside the reference worker. Returns bytes/s and FLOP/s peaks."""
    cuda = device.type == "cuda"

    def best(fn: Any, reps: int) -> float:
        fn()
        times = []
        for _ in range(reps):
            if cuda:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        return min(times)

    n_bytes = (1 << 30) if cuda else (1 << 26)
    src = torch.empty(n_bytes // 4, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    t = best(lambda: dst.copy_(src), 10 if cuda else 5)
    out = {"bandwidth_Bps": 2 * n_bytes / t}
    n = 8192 if cuda else 1024
    old = torch.backends.cuda.matmul.allow_tf32 if cuda else None
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    out["fp32_flops"] = 2 * n**3 / best(lambda: a @ b, 5 if cuda else 3)
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = old
        a16, b16 = a.bfloat16(), b.bfloat16()
        out["bf16_flops"] = 2 * n**3 / best(lambda: a16 @ b16, 10)
    return out


def cache_path(cache_root: str, device_name: str, torch_version: str) -> Path:
    key = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{device_name}-{torch_version}")
    return Path(cache_root).parent / "peaks" / f"{key}.json"


def load_or_measure(cache_root: str, device_name: str, torch_version: str, ask: Any) -> dict[str, float] | None:
    p = cache_path(cache_root, device_name, torch_version)
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        pass
    peaks = ask()
    if peaks:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(peaks, indent=1))
        os.replace(tmp, p)
    return peaks


def percent(flops: float | None, nbytes: float | None, seconds: float, peaks: dict[str, float],
            dtype: str) -> dict[str, float]:
    out: dict[str, float] = {}
    if seconds <= 0:
        return out
    if nbytes and peaks.get("bandwidth_Bps"):
        out["pct_memory"] = 100.0 * nbytes / seconds / peaks["bandwidth_Bps"]
    peak = peaks.get("bf16_flops") if dtype in ("bfloat16", "float16") and peaks.get("bf16_flops") else peaks.get("fp32_flops")
    if flops and peak:
        out["pct_compute"] = 100.0 * flops / seconds / peak
    return out


def judge_speed_of_light(j: Any, profile: str) -> None:
    """% of the device's measured peaks for judge ``j``'s candidate (sandbox/judge.py; skipped
    when the task has no FLOPs/bytes formulas)."""
    from sandbox.worker.judgeenv import cache_root

    flops, nbytes = j.task.work(profile)
    if not (flops or nbytes) or "candidate" not in j.v.timings:
        return
    info, _ = j.ref.request("device_name")

    def ask() -> dict[str, float] | None:
        rep, _ = j.ref.request("peaks")
        return rep.get("peaks") if rep.get("ok") else None

    peaks = load_or_measure(cache_root(j.cfg), info.get("device_name", "?"), info.get("torch", "?"), ask)
    if peaks:
        secs = j.v.timings["candidate"].median_us / 1e6
        j.v.speed_of_light = {k: round(v, 3) for k, v in percent(flops, nbytes, secs, peaks, j.task.meta.dtype).items()}
        j.v.evidence["peaks"] = peaks
