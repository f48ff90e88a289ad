#!/usr/bin/env python
"""Time every reference op's eager and torch.compile forward on this machine's GPU and write a
dated table (JSON + markdown) with % of memory and compute speed-of-light.

    python harness/bench/tools/gpu_baselines.py                      # full suite, default shapes, $OUT or ./baselines
    python harness/bench/tools/gpu_baselines.py --ops relu,softmax --no-compile
    python harness/bench/tools/gpu_baselines.py --category matmul --deadline-s 300 --workers 16

How it measures:
* Device peaks once: device-to-device copy bandwidth (bytes read + written), fp32 matmul with
  TF32 off, bf16 matmul. TF32 stays off for every measurement (the ops are fp32 ops).
* Eager: in this process, one op after another on a quiet GPU.
* torch.compile: compiled in a pool of worker processes (compilation is CPU-bound, 10-40 s an
  op); each worker times its compiled op while holding a shared lock, so only one op is timed
  at a time (other workers may still be compiling on the CPU meanwhile). Compile measurements
  not started by --deadline-s are skipped and marked.
* Each timed call: L2 flushed first (a buffer of twice the L2 size is zeroed), inputs rotated
  among several freshly generated copies, CUDA events around the call, warm-up calls first,
  median of --reps (>= 20) samples. On CPU (--device cpu, used by the tests) host timers
  replace events and there is no flush.
* Ops whose eager time is under 20 us are flagged: launch overhead dominates there.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as dt
import json
import math
import multiprocessing as mp
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import torch  # noqa: E402

from harness.suite.checks import build, flat_outputs  # noqa: E402
from harness.suite.suites import resolve  # noqa: E402
from sandbox.intake.task import Task, load_task  # noqa: E402

MIN_EAGER_US = 20.0
_LOCK = None  # set in workers by _init_worker


# ---------------------------------------------------------------- timing


class Timer:
    """Times ``fn(*inputs)`` with an L2 flush before each call (CUDA) or host timers (CPU)."""

    def __init__(self, device: str, reps: int = 25, warmup: int = 3) -> None:
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.reps, self.warmup = max(reps, 20), warmup
        self.flush = None
        if self.cuda:
            l2 = (
                getattr(torch.cuda.get_device_properties(self.device), "L2_cache_size", 50 * 2**20)
                or 50 * 2**20
            )
            self.flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=self.device)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def __call__(self, fn, input_sets: list[list]) -> list[float]:
        """Per-call times in microseconds."""
        with torch.no_grad():
            for i in range(self.warmup):
                fn(*input_sets[i % len(input_sets)])
            self.sync()
            samples = []
            if self.cuda:
                ev = [
                    (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                    for _ in range(self.reps)
                ]
                for i, (s, e) in enumerate(ev):
                    self.flush.zero_()
                    s.record()
                    fn(*input_sets[i % len(input_sets)])
                    e.record()
                self.sync()
                samples = [s.elapsed_time(e) * 1e3 for s, e in ev]
            else:
                for i in range(self.reps):
                    t0 = time.perf_counter()
                    fn(*input_sets[i % len(input_sets)])
                    samples.append((time.perf_counter() - t0) * 1e6)
        return samples


def summarize(samples: list[float]) -> dict:
    med = statistics.median(samples)
    cv = statistics.pstdev(samples) / statistics.fmean(samples) if len(samples) > 1 else 0.0
    return {"median_us": med, "min_us": min(samples), "cv": cv, "n": len(samples)}


def measure_peaks(device: str, timer: Timer) -> dict:
    """Copy bandwidth (read + write, bytes/s), fp32 (TF32 off) and bf16 matmul FLOP/s."""
    cuda = timer.cuda
    n_bytes = 512 * 2**20 if cuda else 16 * 2**20
    src = torch.randn(n_bytes // 4, device=device)
    dst = torch.empty_like(src)
    t = statistics.median(timer(lambda s=src, d=dst: d.copy_(s), [[]]))
    peaks = {"copy_bytes_per_s": 2 * n_bytes / (t * 1e-6)}
    del src, dst
    n = 8192 if cuda else 256
    for key, dtype in (("fp32_flops_per_s", torch.float32), ("bf16_flops_per_s", torch.bfloat16)):
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        t = statistics.median(timer(lambda a=a, b=b: a @ b, [[]]))
        peaks[key] = 2 * n**3 / (t * 1e-6)
    return peaks


def input_copies(task: Task, profile: str, device: str, copies: int, seed: int = 0):
    """The model (built once, like the evaluator) and ``copies`` input sets from different seeds."""
    model, first = build(task, profile, seed, device)
    mod = task.load_module(profile)
    sets = [first]
    for i in range(1, copies):
        torch.manual_seed(seed + 100 * i)
        with torch.device(device):
            sets.append(list(mod.get_inputs()))
    return model, sets


def sol(
    task: Task, profile: str, us: float | None, peaks: dict
) -> tuple[float | None, float | None]:
    if not us:
        return None, None
    flops, nbytes = task.work(profile)
    peak_c = (
        peaks["bf16_flops_per_s"]
        if task.meta.dtype in ("bfloat16", "float16")
        else peaks["fp32_flops_per_s"]
    )
    mem = 100 * nbytes / (us * 1e-6) / peaks["copy_bytes_per_s"] if nbytes else None
    comp = 100 * flops / (us * 1e-6) / peak_c if flops else None
    return mem, comp


def _set_precision() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


# ---------------------------------------------------------------- compile workers


def _init_worker(lock, cache_dir: str) -> None:
    global _LOCK
    _LOCK = lock
    if cache_dir:
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", cache_dir)
    _set_precision()


def compile_and_time(
    path: str, profile: str, device: str, reps: int, copies: int, deadline: float
) -> dict:
    """Worker: compile one op (outside the lock), then time it holding the GPU lock."""
    if time.time() > deadline:
        return {"status": "skipped", "note": "compile skipped (deadline)"}
    task = load_task(path)
    try:
        model, sets = input_copies(task, profile, device, copies)
        compiled = torch.compile(model)
        t0 = time.time()
        with torch.no_grad():
            compiled(*sets[0])
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        compile_s = time.time() - t0
        with _LOCK:
            samples = Timer(device, reps)(compiled, sets)
        return {"status": "ok", "compile_s": compile_s, **summarize(samples)}
    except Exception as e:  # noqa: BLE001 - one op's failure is a table note
        return {"status": "error", "note": f"compile failed: {type(e).__name__}: {str(e)[:200]}"}


# ---------------------------------------------------------------- main


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="full", help="suite, op list or path (default: full)")
    ap.add_argument("--ops", default=None, help="comma-separated op names (overrides --suite)")
    ap.add_argument("--category", default=None, help="only ops of this category")
    ap.add_argument(
        "--profile",
        default="default",
        help="shape profile (default: default; 'small' for CPU tests)",
    )
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--reps", type=int, default=25, help="timed calls per measurement (>= 20)")
    ap.add_argument("--copies", type=int, default=3, help="input copies rotated between calls")
    ap.add_argument("--no-compile", action="store_true", help="eager only")
    ap.add_argument("--workers", type=int, default=max(1, min(16, (os.cpu_count() or 2) - 1)))
    ap.add_argument(
        "--deadline-s",
        type=float,
        default=420.0,
        help="seconds from start after which no new compile measurement starts",
    )
    ap.add_argument(
        "--out", default=os.environ.get("OUT") or "baselines", help="output folder (default $OUT)"
    )
    return ap.parse_args(argv)


def select_tasks(args) -> list[Task]:
    tasks = resolve(args.ops if args.ops else args.suite)
    if args.category:
        tasks = [t for t in tasks if t.meta.category == args.category]
    return tasks


def fmt(x, spec=".1f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def markdown(report: dict) -> str:
    p = report["peaks"]
    lines = [
        f"# Reference op baselines ({report['date']})",
        "",
        f"Device: {report['device_name']} | torch {report['torch']} | profile `{report['profile']}` | "
        f"{report['reps']} timed calls per measurement, median"
        + (
            ", L2 flushed before each call (CUDA events)."
            if report["device"].startswith("cuda")
            else ", host timers."
        ),
        f"Peaks measured here: copy {p['copy_bytes_per_s'] / 1e9:.0f} GB/s (read+write), "
        f"fp32 matmul (TF32 off) {p['fp32_flops_per_s'] / 1e12:.2f} TFLOP/s, "
        f"bf16 matmul {p['bf16_flops_per_s'] / 1e12:.2f} TFLOP/s.",
        "",
        "| op | category | eager us | compile us | compile/eager | %SOL mem | %SOL compute | notes |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in report["results"]:
        ratio = r["compile_us"] / r["eager_us"] if r["compile_us"] and r["eager_us"] else None
        lines.append(
            f"| {r['op']} | {r['category']} | {fmt(r['eager_us'])} | {fmt(r['compile_us'])} | {fmt(ratio, '.2f')} | "
            f"{fmt(r['sol_mem_pct'])} | {fmt(r['sol_compute_pct'])} | {'; '.join(r['notes'])} |"
        )
    flagged = [r["op"] for r in report["results"] if any("< 20 us" in n for n in r["notes"])]
    lines += ["", f"Ops under {MIN_EAGER_US:.0f} us eager: {', '.join(flagged) or 'none'}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args = parse_args(argv)
    t_start = time.time()
    deadline = t_start + args.deadline_s
    _set_precision()
    tasks = select_tasks(args)
    if not tasks:
        print("no ops selected", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    timer = Timer(args.device, args.reps)
    peaks = measure_peaks(args.device, timer)
    print(f"peaks: {json.dumps({k: f'{v:.3e}' for k, v in peaks.items()})}", flush=True)

    results: dict[str, dict] = {}
    for t in tasks:
        prof = args.profile if args.profile in t.profiles else "default"
        row = {
            "op": t.name,
            "category": t.meta.category,
            "profile": prof,
            "eager_us": None,
            "compile_us": None,
            "sol_mem_pct": None,
            "sol_compute_pct": None,
            "compile_sol_mem_pct": None,
            "notes": [],
        }
        try:
            model, sets = input_copies(t, prof, args.device, args.copies)
            with torch.no_grad():
                out0 = model(*sets[0])
            row["outputs"] = [list(o.shape) for o in flat_outputs(out0)]
            del out0
            e = summarize(timer(model, sets))
            row["eager"] = e
            row["eager_us"] = e["median_us"]
            row["sol_mem_pct"], row["sol_compute_pct"] = sol(t, prof, e["median_us"], peaks)
            if e["median_us"] < MIN_EAGER_US:
                row["notes"].append(
                    f"eager < 20 us ({e['median_us']:.1f}): launch-bound, enlarge default shape"
                )
            del model, sets
        except Exception as ex:  # noqa: BLE001
            row["notes"].append(f"eager failed: {type(ex).__name__}: {str(ex)[:200]}")
        if timer.cuda:
            torch.cuda.empty_cache()
        results[t.name] = row
        print(
            f"eager {t.name:<32} {fmt(row['eager_us']):>10} us  {'; '.join(row['notes'])}",
            flush=True,
        )

    if not args.no_compile and time.time() > deadline:
        for row in results.values():
            if row["eager_us"] is not None:
                row["notes"].append("compile skipped (deadline)")
    elif not args.no_compile:
        ctx = mp.get_context("spawn")
        lock = ctx.Lock()
        cache = str(out / "inductor_cache")
        pool = cf.ProcessPoolExecutor(
            max_workers=args.workers,
            mp_context=ctx,
            initializer=_init_worker,
            initargs=(lock, cache),
        )
        futs = {
            pool.submit(
                compile_and_time,
                str(t.path),
                results[t.name]["profile"],
                args.device,
                args.reps,
                args.copies,
                deadline,
            ): t
            for t in tasks
            if results[t.name]["eager_us"] is not None
        }
        grace = 60.0  # a compile started before the deadline may finish within this
        try:
            for f in cf.as_completed(futs, timeout=max(1.0, deadline - time.time() + grace)):
                t = futs[f]
                r = f.result()
                row = results[t.name]
                if r["status"] == "ok":
                    row["compile"] = r
                    row["compile_us"] = r["median_us"]
                    row["compile_sol_mem_pct"] = sol(t, row["profile"], r["median_us"], peaks)[0]
                else:
                    row["notes"].append(r["note"])
                print(
                    f"compile {t.name:<30} {fmt(row['compile_us']):>10} us  {r.get('note', '')}",
                    flush=True,
                )
        except cf.TimeoutError:
            pass
        finally:
            for f, t in futs.items():
                if not f.done():
                    running = f.running()
                    f.cancel()
                    results[t.name]["notes"].append(
                        "compile unfinished at deadline"
                        if running
                        else "compile skipped (deadline)"
                    )
            procs = list(getattr(pool, "_processes", {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                if p.is_alive():
                    p.kill()

    from harness.env.probe import fingerprint

    fp = fingerprint()
    report = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "device": args.device,
        "device_name": fp["gpu"] or f"CPU ({fp['cpu']}, {fp['cpu_count']} cores)",
        "torch": torch.__version__,
        "fingerprint": fp,
        "profile": args.profile,
        "reps": timer.reps,
        "peaks": peaks,
        "wall_s": time.time() - t_start,
        "results": [results[t.name] for t in tasks],
    }
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    (out / f"baselines_{stamp}.json").write_text(json.dumps(report, indent=2))
    md = markdown(report)
    (out / f"baselines_{stamp}.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
