#!/usr/bin/env python3
"""Judge red-team cases on the GPU one by one and print each verdict with its timing evidence.

    python3 harness/bench/tools/gpu_cases.py gpu_cheat_34_hidden_tail gpu_probe_34b_tail_below_floor ...
    python3 harness/bench/tools/gpu_cases.py --device=cuda:0 gpu_probe_38_one_gpu ...

Unlike the pytest suite, it prints what a passing case measured (the wall-clock check's gaps,
the candidate's median) so a dated record can quote it. Exit 1 when a verdict is not among
the case's accepted statuses and rules.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from sandbox.evaluate import evaluate  # noqa: E402
from sandbox.intake.task import load_task  # noqa: E402
from tests.adversarial.redteam import GPU_CASES, config  # noqa: E402


def main(names: list[str]) -> int:
    device = "cuda"
    if names and names[0].startswith("--device="):  # e.g. --device=cuda:0: the worker's one-GPU view
        device, names = names[0].split("=", 1)[1], names[1:]
    cases = {c.candidate: c for c in GPU_CASES}
    bad = 0
    for name in names:
        c = cases[name]
        t = time.monotonic()
        v = evaluate(load_task(c.task_path()), c.source(), config(c, device=device))
        ok = v.status in c.statuses and (not c.rules or v.rule in c.rules)
        bad += not ok
        med = v.timings.get("candidate").median_us if "candidate" in v.timings else None
        print(json.dumps({"case": name, "ok": ok, "status": v.status.value, "rule": v.rule, "median_us": med,
                          "gap_us": {k: x for k, x in (v.evidence.get("gap_us") or {}).items() if k != "samples"},
                          "tail_us": v.evidence.get("tail_us"),
                          "steps_tail_us": {k: x for k, x in (v.evidence.get("steps_tail_us") or {}).items()
                                            if k != "samples"},
                          "device": v.device,
                          "held_s": v.durations_s.get("exclusive"),
                          "warm_apart_held_s": v.evidence.get("warm_apart_exclusive_s"), "message": (v.message or "")[:300],
                          "wall_s": round(time.monotonic() - t, 1)}), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
