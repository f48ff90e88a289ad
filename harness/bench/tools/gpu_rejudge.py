"""Judge chosen variants of harness/bench/tools/gpu_throughput.py's ReLU family one at a time, with no load
beside them, several times each: whether a verdict a loaded pipeline gave is the kernel's or the
load's (``gpu_throughput.py --rejudge 33,37 --repeat 3``). One JSON line per judgement."""

from __future__ import annotations

import json
from typing import Any

from gpu_throughput import make_candidates


def rejudge(task: Any, lang: str, variants: list[int], repeat: int, cfg: Any) -> int:
    from sandbox.evaluate import evaluate

    for k in variants:
        src = make_candidates(lang, 1, offset=k)[0]
        for r in range(repeat):
            v = evaluate(task, src, cfg)
            t = v.evidence.get("tail_us") or {}
            print(json.dumps({"variant": k, "run": r, "status": v.status.value, "rule": v.rule,
                              "tail_excess_us": t.get("excess"), "tail_threshold_us": t.get("threshold"),
                              "confirmation_round": t.get("confirmation_round"),
                              "first_round": v.evidence.get("wall_clock_first_round"),
                              "median_us": v.timings["candidate"].median_us if "candidate" in v.timings else None,
                              "message": v.message[:160]}), flush=True)
    return 0
