#!/usr/bin/env python3
"""Side by side, in one call: stock one-at-a-time judging vs the compile pipeline (issue 8).

    python harness/bench/tools/gpu_throughput.py                      # on the lent GPU (about 8-9 minutes)
    python harness/bench/tools/gpu_throughput.py --device cpu --lang cpp --serial 1 --pipeline 2 --workers 1

Candidates are generated from one ReLU kernel template (reference_ops/activation/relu.py) with
different constants baked in (threads per block, unroll, a variant id), so each needs its own
compile. Phases, on fresh build caches, in this order:
  (a) stock: the first ``--serial`` candidates one at a time, each compiled (stock load_inline,
      default arch list, no PCH) then timed, as stock harnesses do; no new one is started after
      ``--stock-share`` of the time budget (``--budget-s``);
  (b) pipeline: ``--pipeline`` candidates through LocalExecutor (``--workers`` sandboxed compile
      workers ahead of one timing worker) with the compile cuts (arch list limited to the GPU
      present, precompiled torch/extension.h);
  (c) re-run: the first ``--rerun`` of them again (all cached: bound by judging, not
      compiling), only if it fits in the time budget.
Prints candidates/minute for (a) and (b), their ratio, the timing worker's busy fraction, the
median compile time with and without the cuts, whether (a) and (b) gave the same verdicts
(status, rule, correctness trials) on the candidates both judged, and a JSON line last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TASK = REPO / "reference_ops" / "activation" / "relu.py"

_CUDA = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
constexpr int kVariant = @V@;
__global__ void relu_v@V@(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t tile = (int64_t)blockDim.x * @U@;
  for (int64_t s = (int64_t)blockIdx.x * tile + threadIdx.x; s < n; s += (int64_t)gridDim.x * tile) {
#pragma unroll
    for (int u = 0; u < @U@; ++u) {
      const int64_t i = s + (int64_t)u * blockDim.x;
      if (i < n) { const float v = x[i]; y[i] = v > 0.f ? v : 0.f; }
    }
  }
}
torch::Tensor relu_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const int64_t n = xc.numel();
  if (n == 0) return y;
  const int64_t tile = (int64_t)@T@ * @U@;
  const int64_t blocks = std::min<int64_t>((n + tile - 1) / tile, 1 << 20);
  relu_v@V@<<<(unsigned)blocks, @T@, 0, c10::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_CPP = r"""
constexpr int kVariant = @V@;
torch::Tensor relu_forward(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* p = xc.data_ptr<float>();
  float* q = y.data_ptr<float>();
  const int64_t n = xc.numel();
  int64_t i = 0;
  for (; i + @U@ <= n; i += @U@)
    for (int u = 0; u < @U@; ++u) q[i + u] = p[i + u] > 0.f ? p[i + u] : 0.f;
  for (; i < n; ++i) q[i] = p[i] > 0.f ? p[i] : 0.f;
  return y;
}
"""

_WRAP = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ext = load_inline(
    name="relu_v{v}",
    cpp_sources={cpp!r},
    cuda_sources={cuda!r},
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_forward(x)
'''

_DECL = "torch::Tensor relu_forward(torch::Tensor x);"


def make_candidates(lang: str, n: int, offset: int = 0) -> list[str]:
    """``n`` distinct ReLU candidates (``lang`` "cuda" or "cpp"), variant ids from ``offset``."""
    out = []
    for k in range(offset, offset + n):
        threads, unroll = (128, 256, 512, 1024)[k % 4], 1 + (k // 4) % 4
        body = (_CUDA if lang == "cuda" else _CPP).replace("@V@", str(k)).replace("@T@", str(threads))
        body = body.replace("@U@", str(unroll))
        if lang == "cuda":
            out.append(_WRAP.format(v=k, cpp=_DECL, cuda=body))
        else:
            out.append(_WRAP.format(v=k, cpp=body, cuda=None))
    return out


def verdict_key(v: Any) -> tuple[Any, ...]:
    """What must agree between (a) and (b): status, rule, each correctness trial's outcome, and
    whether every output checked during timing passed (how many timed calls get checked
    depends on how long timing ran, so their count is not compared)."""
    timing = {"timed", "re-check"}
    return (v.status.value, v.rule, tuple((t.shape_label, t.passed) for t in v.trials if t.shape_label not in timing),
            all(t.passed for t in v.trials if t.shape_label in timing))


def ninja_edges(cache_root: str | Path) -> dict[str, Any]:
    """Median seconds per build step (host .cpp, CUDA .cu, link) from the .ninja_log of every
    build under ``cache_root``: where a build's time went."""
    steps: dict[str, list[float]] = {}
    for log in Path(cache_root).glob("*/.ninja_log"):
        for line in log.read_text(errors="replace").splitlines()[1:]:
            f = line.split("\t")
            if len(f) < 4:
                continue
            out = f[3]
            kind = "link" if out.endswith(".so") else ("cuda" if ".cuda." in out else "cpp")
            steps.setdefault(kind, []).append((int(f[1]) - int(f[0])) / 1e3)
    return {k: {"n": len(v), "median_s": _median(v)} for k, v in sorted(steps.items())}


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 2) if xs else None


def run_stock(task: Any, sources: list[str], cfg: Any, deadline: float) -> dict[str, Any]:
    """(a): one at a time, each compiled (stock load_inline) then judged."""
    from sandbox.evaluate import evaluate

    saved = {k: os.environ.pop(k, None) for k in ("KH_BUILD_PCH", "KH_BUILD_LITE")}
    verdicts, compile_s, per = [], [], []
    t0 = time.monotonic()
    try:
        for src in sources:
            if verdicts and time.monotonic() + statistics.mean(per) > deadline:
                break
            t = time.monotonic()
            v = evaluate(task, src, cfg)
            per.append(time.monotonic() - t)
            verdicts.append(v)
            if v.durations_s.get("compile"):
                compile_s.append(float(v.durations_s["compile"]))
    finally:
        os.environ.update({k: v for k, v in saved.items() if v is not None})
    wall = time.monotonic() - t0
    return {"n": len(verdicts), "wall_s": round(wall, 2), "verdicts": verdicts,
            "candidates_per_min": round(60 * len(verdicts) / wall, 3) if verdicts else None,
            "median_compile_s": _median(compile_s), "compile_s": compile_s}


def run_cut_compare(task: Any, sources: list[str], cfg: Any) -> dict[str, Any]:
    """The same sources as (a), built one at a time with the compile cuts on (nothing else
    running), so the compile-time cut is measured without (b)'s contention: 15 builds at once
    slow each other down, which says nothing about the cuts."""
    from harness.executors.cuts import apply_compile_cuts
    from sandbox.build.prebuild import prebuild

    saved = {k: os.environ.get(k) for k in ("KH_BUILD_PCH", "KH_BUILD_LITE", "TORCH_CUDA_ARCH_LIST")}
    try:
        cuts = apply_compile_cuts()
        compile_s, outcomes = [], []
        for src in sources:
            r = prebuild(task, src, cfg)
            outcomes.append(r.outcome)
            if r.outcome == "built" and r.builds:
                compile_s.append(r.compile_s)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return {"n": len(sources), "outcomes": outcomes, "compile_s": compile_s,
            "median_compile_s": _median(compile_s), "ninja": ninja_edges(cfg.build_dir),
            "cuts": {"arch_list": cuts.arch_list, "pch": cuts.pch, "lite": cuts.lite}}


def run_pipeline(task: Any, sources: list[str], cfg: Any, workers: int, cuts: bool,
                 deadline: float | None = None) -> dict[str, Any]:
    """(b)/(c): all candidates submitted at once to a LocalExecutor. With a ``deadline``, the
    rate counts the verdicts in by then; the rest are cancelled (the call must end in time)."""
    from concurrent.futures import wait

    from harness.executors.local import LocalExecutor

    t_start = time.monotonic()
    ex = LocalExecutor(compile_workers=workers, compile_cuts=cuts)
    setup_s = time.monotonic() - t_start
    try:
        t0 = time.monotonic()
        futs = [ex.submit(task, s, cfg) for s in sources]
        wait(futs, timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
        wall = time.monotonic() - t0
        ok = [f.done() and not f.cancelled() and f.exception() is None for f in futs]
        n_done = sum(ok)
        prefix = ok.index(False) if False in ok else len(ok)
        verdicts = [f.result() for f in futs[:prefix]]  # verdict i is source i's (for the comparison)
        summary = ex.summary()
    finally:
        ex.close()
    return {"n": n_done, "n_submitted": len(sources), "wall_s": round(wall, 2), "setup_s": round(setup_s, 2),
            "verdicts": verdicts, "candidates_per_min": round(60 * n_done / wall, 3),
            "busy_fraction": round(ex.stats.busy_s / (wall * len(ex.devices)), 3),
            "median_compile_s": _median(ex.stats.build_compile_s), "compile_s": ex.stats.build_compile_s,
            "summary": summary}


def _portable(r: dict[str, Any]) -> dict[str, Any]:
    """A phase's result as plain JSON data: verdicts become comparison keys, statuses, messages."""
    out = {k: v for k, v in r.items() if k not in ("verdicts", "summary")}
    vs = r.get("verdicts", [])
    out["keys"] = json.loads(json.dumps([verdict_key(v) for v in vs]))
    out["statuses"] = [v.status.value for v in vs]
    out["messages"] = [v.message for v in vs]
    out["not_valid"] = [{"i": i, "status": v.status.value, "rule": v.rule, "message": v.message[:400],
                         "logs": (v.logs or "")[-800:], "gap_us": v.evidence.get("gap_us"),
                         "durations_s": v.durations_s}
                        for i, v in enumerate(vs) if v.status.value != "valid"]
    keys = sorted({k for v in vs for k in v.durations_s})
    out["median_durations_s"] = {k: _median([float(v.durations_s[k]) for v in vs if k in v.durations_s]) for k in keys}
    reqs = sorted({k for v in vs for k in (v.evidence.get("requests") or {})})
    out["median_requests_s"] = {k: _median([float(v.evidence["requests"][k][1]) for v in vs
                                            if k in (v.evidence.get("requests") or {})]) for k in reqs}
    # timing checks that fired in their first round, and what the confirmation round (builds stopped) decided
    out["first_rounds"] = [{"i": i, "status": v.status.value, "rule": v.rule,
                            "first": v.evidence.get("wall_clock_first_round"),
                            "tail_after": (v.evidence.get("tail_us") or {}).get("excess"),
                            "bg": (v.evidence.get("background_cpu_us") or {}).get("confirmation")}
                           for i, v in enumerate(vs)
                           if v.evidence.get("wall_clock_first_round")
                           or (v.evidence.get("background_cpu_us") or {}).get("confirmation")]
    out["built_without_extension_h"] = sum(1 for v in vs if (v.evidence.get("build") or {}).get("lite"))
    if "summary" in r:
        out["summary"] = {k: v for k, v in r["summary"].items() if k != "cuts"}
        out["cuts"] = r["summary"]["cuts"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    ap.add_argument("--lang", choices=["cuda", "cpp"], default=None, help="default: cuda on a GPU")
    ap.add_argument("--serial", type=int, default=6, help="(a) candidates judged one at a time")
    ap.add_argument("--pipeline", type=int, default=32, help="(b) candidates through the pipeline")
    ap.add_argument("--rerun", type=int, default=8, help="(c) already-built candidates judged again (if time)")
    ap.add_argument("--workers", type=int, default=None, help="compile workers (default: CPUs - 1)")
    ap.add_argument("--budget-s", type=float, default=530.0, help="whole-script time budget (s)")
    ap.add_argument("--stock-share", type=float, default=0.62,
                    help="(a) starts no new candidate after this share of --budget-s")
    ap.add_argument("--timing-s", type=float, default=0.5, help="feedback_timing_s of the EvalConfig")
    ap.add_argument("--no-cuts", action="store_true", help="(b) without the compile cuts")
    ap.add_argument("--shared-cache", default=None,
                    help="one build cache for all phases (tests: repeat runs compile nothing)")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--only-stock", action="store_true",
                    help="run (a) only (with --json FILE: for --stock-from in a second call)")
    ap.add_argument("--stock-from", default=None, help="skip (a): take it from an --only-stock JSON")
    ap.add_argument("--pipeline-budget-s", type=float, default=None,
                    help="(b) counts the verdicts in by this many seconds after the start (then stops)")
    ap.add_argument("--rejudge", default=None,
                    help="only judge these variant ids (comma-separated), one at a time, --repeat times each "
                         "(e.g. the ones a loaded pipeline rejected), then exit")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cut-compare", type=int, default=3,
                    help="after (a): build this many of its sources again, one at a time, with the cuts")
    a = ap.parse_args(argv)
    t_begin = time.monotonic()

    import torch

    from sandbox.evaluate import EvalConfig
    from sandbox.intake.task import load_task
    from sandbox.verdict import Mode

    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    lang = a.lang or ("cuda" if device.startswith("cuda") else "cpp")
    workers = a.workers if a.workers is not None else max(1, (os.cpu_count() or 2) - 1)
    task = load_task(TASK)
    work = Path(tempfile.mkdtemp(prefix="kh-throughput-"))
    caches = {p: a.shared_cache or str(work / p) for p in ("stock", "cuts")}
    base = dict(mode=Mode.FEEDBACK, device=device, seed=0, baselines=("eager",), feedback_timing_s=a.timing_s,
                profile="default" if device.startswith("cuda") else "small", timeout_s=900.0)
    if a.rejudge:  # no load beside them: each variant alone, --repeat times (harness/bench/tools/gpu_rejudge.py)
        from gpu_rejudge import rejudge

        return rejudge(task, lang, [int(x) for x in a.rejudge.split(",")], a.repeat,
                       EvalConfig(build_dir=str(work / "rejudge"), **base))
    n_all = max(a.pipeline, a.serial)
    sources = make_candidates(lang, n_all)
    print(f"device {device} ({torch.cuda.get_device_name() if device.startswith('cuda') else 'cpu'}), "
          f"lang {lang}, {os.cpu_count()} CPUs, {workers} compile workers; torch {torch.__version__}",
          flush=True)

    # (a) stock first: default arch list and no precompiled header, as load_inline does by itself
    # (torch's stock path deletes a precompiled header; (b) builds its own afterwards)
    if a.stock_from:  # (a) measured by an earlier call (--only-stock --json FILE)
        s = json.loads(Path(a.stock_from).read_text())["stock"]
        print(f"(a) stock from {a.stock_from}: {s['n']} -> {s['candidates_per_min']}/min", flush=True)
    else:
        s = run_stock(task, sources[: a.serial], EvalConfig(build_dir=caches["stock"], **base),
                      t_begin + a.stock_share * a.budget_s)
        s = _portable(s)
        print(f"(a) stock: {s['n']} in {s['wall_s']} s -> {s['candidates_per_min']}/min, median compile "
              f"{s['median_compile_s']} s" + (" (stopped early: time budget)" if s["n"] < a.serial else ""),
              flush=True)
        s["ninja"] = ninja_edges(caches["stock"])
        print(f"(a) median seconds per judgement phase: {s.get('median_durations_s')}; build steps {s['ninja']}",
              flush=True)
        print(f"(a) median seconds per worker request kind: {s.get('median_requests_s')}", flush=True)
    if not a.stock_from and not a.no_cuts and a.cut_compare > 0 and s["n"]:
        k = min(a.cut_compare, s["n"])
        s["cut_compare"] = run_cut_compare(task, sources[:k], EvalConfig(build_dir=str(work / "cutcmp"), **base))
        cc = s["cut_compare"]
        stock_same = _median(s["compile_s"][:k])
        cc["median_compile_stock_same_s"] = stock_same
        cc["factor"] = round(stock_same / cc["median_compile_s"], 2) if stock_same and cc["median_compile_s"] else None
        print(f"(a') the same {k} sources built one at a time with the cuts {cc['cuts']}: median compile "
              f"{cc['median_compile_s']} s vs stock {stock_same} s (/{cc['factor']}); build steps {cc['ninja']}",
              flush=True)
    if a.only_stock:
        if a.json:
            Path(a.json).write_text(json.dumps({"stock": s}, indent=1))
        print("RESULT " + json.dumps({"stock": s}), flush=True)
        return 0
    b = run_pipeline(task, sources[: a.pipeline], EvalConfig(build_dir=caches["cuts"], **base), workers,
                     cuts=not a.no_cuts,
                     deadline=t_begin + a.pipeline_budget_s if a.pipeline_budget_s else None)
    print(f"(b) pipeline: {b['n']} in {b['wall_s']} s -> {b['candidates_per_min']}/min, busy "
          f"{b['busy_fraction']}, median compile {b['median_compile_s']} s, cuts {b['summary']['cuts']}",
          flush=True)
    c = None
    n_c = min(a.rerun, a.pipeline)
    est_c = n_c * b["summary"]["busy_s_per_judgement"] * 1.3 + 5
    if n_c > 0 and time.monotonic() + est_c < t_begin + a.budget_s:
        c = run_pipeline(task, sources[:n_c], EvalConfig(build_dir=caches["cuts"], **base), workers, cuts=False)
        print(f"(c) re-run (cached): {c['n']} in {c['wall_s']} s -> {c['candidates_per_min']}/min, "
              f"busy {c['busy_fraction']}, builds {c['summary']['built']} cached", flush=True)
    elif n_c > 0:
        print(f"(c) re-run skipped: about {est_c:.0f} s left to do it within --budget-s", flush=True)

    b = _portable(b)
    b["ninja"] = ninja_edges(caches["cuts"])
    print(f"(b) median seconds per judgement phase: {b.get('median_durations_s')}; "
          f"{b.get('built_without_extension_h')} of {len(b['keys'])} built without torch/extension.h; "
          f"build steps {b['ninja']}", flush=True)
    print(f"(b) median seconds per worker request kind: {b.get('median_requests_s')}", flush=True)
    for nv in b["not_valid"]:
        print(f"(b) not valid: {json.dumps(nv)[:1500]}", flush=True)
    for fr in b.get("first_rounds", []):
        print(f"(b) first round fired: {json.dumps(fr)[:800]}", flush=True)
    both = min(s["n"], len(b["keys"]))
    mismatches = [i for i in range(both) if s["keys"][i] != b["keys"][i]]
    ratio = round(b["candidates_per_min"] / s["candidates_per_min"], 2) if s["candidates_per_min"] else None
    cut = (round(s["median_compile_s"] / b["median_compile_s"], 2)
           if s["median_compile_s"] and b["median_compile_s"] else None)
    result = {
        "device": device, "lang": lang, "workers": workers, "cpus": os.cpu_count(),
        "stock_per_min": s["candidates_per_min"], "pipeline_per_min": b["candidates_per_min"],
        "ratio": ratio, "busy_fraction": b["busy_fraction"],
        "rerun_per_min": c and c["candidates_per_min"], "rerun_busy_fraction": c and c["busy_fraction"],
        "median_compile_stock_s": s["median_compile_s"], "median_compile_cuts_s": b["median_compile_s"],
        "compile_cut_factor": cut, "cut_compare": s.get("cut_compare"), "n_stock": s["n"], "n_pipeline": b["n"], "compared": both,
        "verdicts_identical": not mismatches, "mismatches": mismatches,
        "mismatch_detail": [[i, s["keys"][i][:2], b["keys"][i][:2], s["messages"][i], b["messages"][i]]
                            for i in mismatches],
        "statuses_pipeline": b["statuses"], "statuses_stock": s["statuses"], "stock": s, "pipeline": b,
        "cuts": b["cuts"], "wall_total_s": round(time.monotonic() - t_begin, 1),
    }
    print("\n| measure | stock (a) | pipeline (b) |\n|---|---|---|")
    print(f"| candidates judged | {s['n']} | {b['n']} |")
    print(f"| candidates / minute | {s['candidates_per_min']} | {b['candidates_per_min']} (x{ratio}) |")
    print(f"| median compile s | {s['median_compile_s']} | {b['median_compile_s']} (/{cut}) |")
    if s.get("cut_compare"):
        cc = s["cut_compare"]
        print(f"| median compile s, same sources one at a time | {cc['median_compile_stock_same_s']} | "
              f"{cc['median_compile_s']} with cuts (/{cc['factor']}) |")
    print(f"| timing worker busy fraction | - | {b['busy_fraction']} |")
    if c:
        print(f"| re-run over cached builds / min | - | {c['candidates_per_min']} (busy {c['busy_fraction']}) |")
    print(f"| verdicts identical on {both} | {'yes' if not mismatches else 'NO: ' + str(mismatches)} | |")
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1))
    print("RESULT " + json.dumps(result), flush=True)
    return 0 if not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
