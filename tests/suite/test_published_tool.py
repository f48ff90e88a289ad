"""harness/bench/tools/gpu_published.py (issue 27 goal 2's published-kernel set): the pick is the
chosen levels' solutions whose KernelBench task exists, in file-name order, the first N; the summary
reads a batch's rows and verdicts (their files' times) into rates, compile times and GPU shares."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "harness" / "bench" / "tools"))

import gpu_published  # noqa: E402


def test_the_pick_is_deterministic_mixed_and_skips_tasks_the_checkout_lacks(tmp_path):
    lb, kb = tmp_path / "lb" / "docs" / "assets", tmp_path / "kb"
    (lb / "solutions").mkdir(parents=True)
    (kb / "level1").mkdir(parents=True)
    (kb / "level2").mkdir(parents=True)
    (kb / "level1" / "1_A.py").write_text("# task")
    (kb / "level2" / "7_B.py").write_text("# task")
    data = {"Level 1: 1_A": [{"display_name": "m1", "file": "cc"}, {"display_name": "m2", "file": "aa"}],
            "Level 2: 7_B": [{"display_name": "m1", "file": "bb"}],
            "Level 2: 9_Gone": [{"display_name": "m1", "file": "dd"}],
            "Level 3: 1_C": [{"display_name": "m1", "file": "ee"}]}
    (lb / "data.json").write_text(json.dumps(data))
    for f in ("aa", "bb", "cc", "dd", "ee"):
        (lb / "solutions" / f"{f}.py").write_text("load_inline\n" if f != "bb" else "import torch\n")
    rows, info = gpu_published.pick(tmp_path / "lb", kb, 2, (1, 2))
    assert [r["id"] for r in rows] == ["l1_1_m2_aa", "l2_7_m1_bb"]  # file-name order, first N
    assert rows[0]["reference"].endswith("level1/1_A.py") and rows[1]["candidate"].endswith("bb.py")
    assert info["available"] == 3 and info["tasks_missing"] == 1 and info["load_inline"] == 1
    assert info["levels"] == {1: 1, 2: 1}


def test_the_summary_reads_rates_compile_times_and_gpu_shares(tmp_path):
    (tmp_path / "verdicts").mkdir()
    t0 = 1_000_000.0
    rows = []
    for k, (end, status, compile_s, held, lane) in enumerate([(20, "valid", 12.0, 4.0, "cuda:0"),
                                                              (50, "valid", 30.0, 6.0, "cuda:1"),
                                                              (80, "rejected", 18.0, 2.0, "cuda:0")]):
        v = {"durations_s": {"total": 10.0, "exclusive": held, "memory_wait": 1.0 * k},
             "evidence": {"executor": {"prebuild": "built", "prebuild_compile_s": compile_s, "lane": lane,
                                       "slot_wait_s": 0.0}}}
        path = tmp_path / "verdicts" / f"{k}.json"
        path.write_text(json.dumps(v))
        os.utime(path, (t0 + end, t0 + end))
        rows.append({"id": str(k), "status": status, "verdict_file": f"verdicts/{k}.json"})
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = gpu_published.summary(tmp_path, t0)
    assert s["judged"] == 3 and s["statuses"] == {"valid": 2, "rejected": 1}
    assert s["first_verdict_s"] == 20 and s["per_min"] == round(60 * 3 / 80, 2)
    assert s["per_min_after_first"] == round(60 * 2 / 60, 2)
    assert s["compile_median_s"] == 18.0 and s["compile_at_most_20s"] == 2
    assert s["gpu_busy"] == {"cuda:0": round(6.0 / 70, 2), "cuda:1": round(6.0 / 70, 2)}  # span 10 .. 80
    assert s["memory_wait_max_s"] == 2.0
