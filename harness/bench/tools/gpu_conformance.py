#!/usr/bin/env python3
"""Judge the conformance set's CUDA rows on a GPU and compare with their expected verdicts.

    python3 harness/bench/tools/gpu_conformance.py                 # every cuda row (tests/conformance/manifest.py)
    python3 harness/bench/tools/gpu_conformance.py --only triton   # rows whose kernel name contains "triton"

Builds first (every row's source imported in its own child process, up to ``--jobs`` at once,
into the build cache's trusted tier: tests/adversarial/redteam.py's ``warm_build_cache``), then
judges each row one at a time under each rule set whose expectation differs (else strict), with
short timing. Prints one JSON line per judgement, then a summary table; exit 1 on any
disagreement, 0 otherwise. Rows that need a missing module (cupy) are reported as skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from sandbox.evaluate import EvalConfig, evaluate  # noqa: E402
from sandbox.intake.task import load_task  # noqa: E402
from tests.adversarial.redteam import warm_build_cache  # noqa: E402
from tests.conformance.manifest import Row, rows  # noqa: E402


def config(row: Row, rules: str, timing_s: float) -> EvalConfig:
    return EvalConfig(device="cuda", rules=rules, profile="default", timeout_s=600.0, max_timing_s=timing_s,
                      feedback_timing_s=timing_s, target_ci=0.05, baselines=("eager",), correctness_trials=3,
                      candidate_name=f"{row.kernel}.py")


def judge(row: Row, rules: str, timing_s: float) -> dict:
    want_status, want_rule = row.expected(rules)
    t = time.monotonic()
    try:
        v = evaluate(load_task(row.task_path()), row.path().read_text(), config(row, rules, timing_s))
        got = (v.status.value, v.rule)
        tol = v.tolerance.get("passes_1e-2")
        ok = got == (want_status, want_rule) and (row.passes_1e2 is None or tol is row.passes_1e2)
        rec = {"status": got[0], "rule": got[1], "message": v.message[:300], "passes_1e-2": tol,
               "tightest": v.tolerance.get("tightest"), "custom_share": v.evidence.get("custom_share"),
               "accommodations": v.evidence.get("accommodations"), "logs": "" if ok else v.logs[-1500:],
               # the build order (sandbox/build/buildphase.py) and where the time went
               "build_apart": v.evidence.get("build_apart"), "durations_s": v.durations_s,
               "check_bg_us": v.evidence.get("check_bg_us"), "build": v.evidence.get("build")}
    except Exception as e:  # noqa: BLE001 - an evaluator crash is a disagreement, reported
        ok, rec = False, {"status": "crash", "rule": None, "message": f"{type(e).__name__}: {e}"[:500]}
    return {"kernel": row.kernel, "task": row.task, "rules": rules, "expected": getattr(row, rules),
            "expected_passes_1e-2": row.passes_1e2, **rec, "agree": ok, "wall_s": round(time.monotonic() - t, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="judge only rows whose kernel name contains this")
    ap.add_argument("--jobs", type=int, default=8, help="parallel builds")
    ap.add_argument("--timing-s", type=float, default=1.0, help="max timing seconds per judgement")
    a = ap.parse_args(argv)
    todo = rows("cuda", a.only)
    if not todo:
        ap.error(f"no cuda row matches --only {a.only!r}")
    skipped = [r for r in todo if r.needs and importlib.util.find_spec(r.needs) is None]
    todo = [r for r in todo if r not in skipped]
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:  # a build that fails is the judge's business
        list(pool.map(lambda r: _try(warm_build_cache, r.path()), todo))
    print(json.dumps({"warm_s": round(time.monotonic() - t0, 1), "rows": len(todo)}), flush=True)
    results = []
    for r in todo:
        for rules in r.rule_sets():
            rec = judge(r, rules, a.timing_s)
            results.append(rec)
            print(json.dumps(rec), flush=True)
    for r in skipped:
        print(json.dumps({"kernel": r.kernel, "skipped": f"{r.needs} not installed"}), flush=True)
    bad = [x for x in results if not x["agree"]]
    print(f"\n{'kernel':40s} {'rules':8s} {'expected':44s} {'got':44s} ok")
    for x in results:
        got = f"{x['status']} {x['rule'] or ''}".strip()
        print(f"{x['kernel']:40s} {x['rules']:8s} {x['expected']:44s} {got:44s} {'yes' if x['agree'] else 'NO'}")
    for r in skipped:
        print(f"{r.kernel:40s} {'-':8s} {'(skipped: ' + r.needs + ' not installed)':44s}")
    print(f"\n{len(results) - len(bad)}/{len(results)} judgements agree, {len(skipped)} rows skipped, "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    return 1 if bad else 0


def _try(fn, *args) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001
        pass


if __name__ == "__main__":
    sys.exit(main())
