"""The counting half of gpu_scale.py (issue 27, goal 6): from a scale run's store and its started.json,
the judgements the evaluator ran (as the store keys its reuse), per minute and over the best window,
the GPU and CPU shares, the LLM's calls, and the projection to an 8-GPU node; written to
WORK/summary.{json,txt}.

    python3 harness/bench/tools/gpu_scale.py summary --work W    # the way to call it
"""

from __future__ import annotations

import collections
import json
import statistics
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from gpu_two_summary import hold_cpu_medians  # this folder (gpu_scale.py puts it on sys.path)


def _p90(xs: list[float]) -> float:
    """The 90th percentile, interpolated between order statistics (the low index it replaced read
    the 80th on ten samples)."""
    return statistics.quantiles(xs, n=10, method="inclusive")[8] if len(xs) > 1 else xs[0]


def _run_ids(meta: dict) -> list[str]:
    return meta.get("run_ids") or [c[c.index("--run-id") + 1] for c in meta.get("cmds", []) if "--run-id" in c]


def _rows(db: Path, run_ids: list[str]) -> tuple[list[tuple], list[tuple]]:
    """Every verdict of the runs as (op, mode, status, stored at, {durations_s, evidence}, task sha,
    source sha, settings key), and every LLM call as (latency, error, stored at), read through the store."""
    from harness.store import Results, Store
    from harness.store.llm_calls import LLMCalls

    store = Store.read_only(db)
    try:
        res = Results(store)
        verdicts = [(v.op, v.mode, v.status, v.created_at,
                     {"durations_s": v.verdict.durations_s, "evidence": v.verdict.evidence},
                     v.task_sha256, v.source_sha256, v.config_key)
                    for r in run_ids for v in res.list_verdicts(r)]
        calls = [(c.latency_s, c.error, c.created_at) for r in run_ids for c in LLMCalls(store).of_run(r)]
    finally:
        store.close()
    return verdicts, calls


def _median(xs: list) -> float | None:
    xs = [x for x in xs if isinstance(x, (int, float))]
    return round(statistics.median(xs), 2) if xs else None


def _t(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def judged_times(verdicts: list[tuple]) -> tuple[list[float], list[dict], collections.Counter]:
    """(the store times of the judgements the evaluator ran, their durations, counts by kind): the first
    verdict of each (task, source, mode, settings key) as the store keys its reuse; later ones were
    reused, and a reply that did not parse (stored with no settings key) was never judged."""
    seen: set = set()
    times, durations, kinds = [], [], collections.Counter()
    for _op, mode, status, created, v, task_sha, source_sha, key_ in verdicts:
        if key_ is None:
            kinds["reply not parsed"] += 1
            continue
        key = (task_sha, source_sha, mode, key_)
        if key in seen:
            kinds["reused"] += 1
            continue
        seen.add(key)
        kinds[f"{mode} {status}"] += 1
        times.append(_t(created))
        durations.append(v.get("durations_s") or {})
    return times, durations, kinds


def best_window(times: list[float], window_s: float) -> tuple[int, float]:
    """(the most judgements in any ``window_s`` stretch, its start)."""
    ts, best, at, j = sorted(times), 0, 0.0, 0
    for i, t in enumerate(ts):
        while ts[j] < t - window_s + 1:  # store times have one-second resolution
            j += 1
        if i - j + 1 > best:
            best, at = i - j + 1, ts[j]
    return best, at


def summary(work: Path, window_s: float) -> dict:
    meta = json.loads((work / "started.json").read_text())
    t0, gpus = meta["t0"], max(1, meta.get("gpus") or 1)
    verdicts, calls = _rows(work / "results" / "harness.sqlite", _run_ids(meta))
    times, durs, kinds = judged_times(verdicts)
    end = meta.get("stopped_at") or meta.get("ended") or time.time()
    span = end - t0
    per_min = collections.Counter(int((t - t0) // 60) for t in times)
    win = min(window_s, span)
    n_win, win_at = best_window(times, win) if times else (0, t0)
    held = sum(d.get("exclusive") or 0.0 for d in durs)
    lat = sorted(c[0] for c in calls if c[0] is not None)
    cpu = [b for t, b in meta.get("cpu_busy", []) if win_at - t0 <= t <= win_at - t0 + win]
    s: dict[str, Any] = {
        "commit": meta.get("commit"), "gpus": meta.get("gpus"), "cpus": meta.get("cpus"), "args": meta["args"],
        "ops": len(meta.get("ops") or []), "span_s": round(span, 1), "judged": len(times), "kinds": dict(kinds),
        "first_verdict_s": round(min(times) - t0, 1) if times else None,
        "per_minute": [per_min.get(m, 0) for m in range(int(span // 60) + 1)],
        "window_s": round(win, 1), "window_start_s": round(win_at - t0, 1), "window_judged": n_win,
        "window_per_min": round(60 * n_win / max(win, 1e-9), 1),
        "gpu_held_share": round(held / max(1e-9, gpus * (max(times) - min(times))), 3) if len(times) > 1 else None,
        "cpu_busy_window": round(statistics.mean(cpu), 3) if cpu else None,
        "llm_calls": len(calls), "llm_errors": sum(1 for c in calls if c[1]),
        "llm_latency_s": {"median": round(statistics.median(lat), 1), "p90": round(_p90(lat), 1)}
        if lat else None,
        "durations_median_s": {k: round(statistics.median(d[k] for d in durs if d.get(k) is not None), 2)
                               for k in ("queue", "check", "time", "exclusive", "total", "harness_total")
                               if any(d.get(k) is not None for d in durs)},
        "prebuild_compile_median_s": _median([(r[4].get("evidence") or {}).get("executor", {})
                                               .get("prebuild_compile_s") for r in verdicts if r[7] is not None]),
        "slot_wait_median_s": _median([(r[4].get("evidence") or {}).get("executor", {}).get("slot_wait_s")
                                       for r in verdicts if r[7] is not None]),  # sandbox/lane/slots.py
        "machine_slots": meta.get("machine_slots"),
        "hold_cpu_median_s": hold_cpu_medians([r[4].get("evidence") or {} for r in verdicts if r[7] is not None]),
        "rc": meta.get("rc"),
    }
    s["projection"] = project(s)
    (work / "summary.json").write_text(json.dumps(s, indent=1))
    lines = [f"gpu_scale: {s['gpus']} GPUs, {s['cpus']} CPUs, commit {s['commit'] or '?'}; runs at once: methods "
             f"{s['args']['methods']} x {s['args']['seeds']} seed(s), each --jobs {s['args']['jobs']} over {s['ops']} ops; "
             f"LLM latency {s['args']['latency']} s, distinct {s['args']['distinct']}",
             f"run span {s['span_s']} s (exit {s['rc']}); first judgement at {s['first_verdict_s']} s; "
             f"{s['judged']} judgements run, by kind {s['kinds']}",
             f"per minute from the start: {s['per_minute']}",
             f"best {s['window_s']:.0f} s window (from {s['window_start_s']} s): {s['window_judged']} judgements, "
             f"{s['window_per_min']} a minute; GPU held share {s['gpu_held_share']}, CPU busy {s['cpu_busy_window']}",
             f"LLM: {s['llm_calls']} calls recorded, {s['llm_errors']} errors, latency {s['llm_latency_s']}; "
             f"judgement durations (median s) {s['durations_median_s']}; builds (median s, cache hits "
             f"included) {s['prebuild_compile_median_s']}; machine-wide slots {s['machine_slots']}, "
             f"median wait for one {s['slot_wait_median_s']} s; over the hold, CPU and run-queue s (median) "
             f"{s['hold_cpu_median_s']}",
             f"projection: {s['projection']}"]
    (work / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return s


PAPER_SCALE = 6 * 3 * 91 * 45  # methods x seeds x ops x trials: about 74,000 judgements (issue 27, goal 6)


def project(s: dict) -> dict | None:
    """The window's rate on an 8-GPU node with twice the GPUs, CPUs and --jobs: twice this rate, unless
    it passes twice the GPU bound (the rate at a GPU held all the time, rate / held share) or twice
    the CPU bound (rate / CPU busy share); and the paper-scale comparison's hours at that rate."""
    rate, gpus = s["window_per_min"], s.get("gpus") or 0
    if not rate or not gpus:
        return None
    bounds = {"jobs doubled": 2 * rate}
    if s.get("gpu_held_share"):
        bounds["GPU bound"] = 2 * rate / s["gpu_held_share"] * 8 / (2 * gpus)
    if s.get("cpu_busy_window"):
        bounds["CPU bound"] = 2 * rate / s["cpu_busy_window"] * 8 / (2 * gpus)
    per_min = min(bounds.values())
    return {"gpus": 8, "per_min": round(per_min, 1), "limited_by": min(bounds, key=bounds.__getitem__),
            "bounds": {k: round(v, 1) for k, v in bounds.items()},
            "paper_scale_hours": round(PAPER_SCALE / per_min / 60, 1)}
