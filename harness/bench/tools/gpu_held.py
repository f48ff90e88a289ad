#!/usr/bin/env python3
"""Where one op's judgements hold the GPU, judgement after judgement in one process (issue 16).

    python3 harness/bench/tools/gpu_held.py --runs 3 [--book --no-reuse-run]   # the honest CUDA relu, final mode

Judges one candidate RUNS times against one task in this process, on one fresh build-cache
root, final mode with both baselines: the first judgement compiles the reference's
torch.compile baseline and books its baselines; later ones find the reference's compile caches
(sandbox/check/refcache.py) and time the booked baselines as sentinels (sandbox/timing/baselinebook.py).
``--no-reuse-run`` adds one judgement with the book switched off (the compile caches still
warm), so the two cuts show apart. One JSON line per judgement: verdict, GPU-held seconds
(durations_s.exclusive), the phases, per-request totals, and what was reused.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from sandbox.evaluate import EvalConfig, evaluate  # noqa: E402
from sandbox.intake.task import load_task  # noqa: E402
from sandbox.verdict import Mode  # noqa: E402


def line(i: int, label: str, v, wall: float) -> dict:
    e, d = v.evidence, v.durations_s
    req = e.get("requests", {})
    return {"run": i, "label": label, "status": v.status.value, "rule": v.rule, "held_s": d.get("exclusive"),
            "wall_s": round(wall, 2), "phases": {k: d.get(k) for k in ("build", "warm", "check", "time", "close", "exclusive", "total")},
            "requests": req,
            "reference_cache": e.get("reference_cache"), "baseline_book": e.get("baseline_book"),
            "order": (e.get("build_apart") or {}).get("order"),
            "median_us": {k: round(m.median_us, 3) for k, m in v.timings.items()},
            "n": {k: m.n for k, m in v.timings.items()},
            "speedups": {k: [round(s.value, 3), round(s.ci_low, 3), round(s.ci_high, 3)] for k, s in v.speedups.items()},
            "message": v.message[:200] if v.status.value != "valid" else ""}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default=str(REPO / "tests/adversarial/tasks/relu.py"))
    ap.add_argument("--candidate", default=str(REPO / "tests/adversarial/candidates/honest_cuda_relu.py"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timing-s", type=float, default=2.0)
    ap.add_argument("--book", action="store_true", help="baseline book on (EvalConfig.reuse_baselines)")
    ap.add_argument("--no-reuse-run", action="store_true", help="one more judgement with the book off")
    ap.add_argument("--build-dir", default=None, help="default: a fresh temporary dir")
    a = ap.parse_args()
    cpu = a.device == "cpu"
    cfg = EvalConfig(device=a.device, mode=Mode.FINAL, profile="small" if cpu else "default", timeout_s=600.0,
                     max_timing_s=a.timing_s, baselines=("eager", "compile"),
                     build_dir=a.build_dir or tempfile.mkdtemp(prefix="kh-held-"),
                     candidate_name=Path(a.candidate).name, reuse_baselines=a.book)
    task, source = load_task(Path(a.task)), Path(a.candidate).read_text()
    plan = [("book on" if a.book else "book off", cfg)] * a.runs + ([("book off", dataclasses.replace(cfg, reuse_baselines=False))]
                                          if a.no_reuse_run else [])
    for i, (label, c) in enumerate(plan, 1):
        t = time.monotonic()
        v = evaluate(task, source, c)
        print(json.dumps(line(i, label, v, time.monotonic() - t)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
