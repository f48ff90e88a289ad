#!/usr/bin/env python3
"""Published KernelBench solutions judged as a batch: compile times, judgements a minute and the
first verdict on real kernels (issue 27, goal 2).

    python3 harness/bench/tools/gpu_published.py manifest --leaderboard DIR --kernelbench KB --n 100 --out M.jsonl
    python3 harness/bench/tools/gpu_published.py summary BATCH_OUT T0 [--json FILE]

``--leaderboard`` is a checkout (or an extract) of a public KernelBench leaderboard that publishes
its solutions: a ``data.json`` mapping "Level L: N_Name" to entries with a ``file`` (the solution's
name in ``solutions/``) and a ``display_name`` (the model). Nothing of it is kept in this repository:
it is carried to the device as data. ``--kernelbench`` is a KernelBench checkout (``levelL/N_Name.py``):
each solution is judged against the current task file, at its current sizes, whatever sizes the
solution was written for.

The pick is deterministic and mixed: the solutions of the chosen levels whose task file exists,
ordered by their file name (a content hash, so levels, tasks and models interleave), the first N.

``summary`` reads the batch's results.jsonl and verdicts (T0: the batch's start, epoch seconds) and
prints the rate from submission and after the first verdict, the first verdict's time, the
statuses, and the compile times the build workers measured (``evidence.executor.prebuild_compile_s``:
CPU-side compile of one candidate while the others build beside it; ``durations_s.compile`` for a unit
an idle GPU took before its build started, built by its judgement).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path
from typing import Any


def _data_json(leaderboard: Path) -> Path:
    for p in (leaderboard / "data.json", leaderboard / "docs" / "assets" / "data.json"):
        if p.is_file():
            return p
    raise SystemExit(f"{leaderboard}: no data.json (nor docs/assets/data.json): pass the leaderboard's checkout")


def pick(leaderboard: Path, kernelbench: Path, n: int, levels: tuple[int, ...]) -> tuple[list[dict[str, Any]], dict]:
    """The manifest rows and what was left out (tasks the KernelBench checkout does not have)."""
    data_path = _data_json(leaderboard)
    solutions = data_path.parent / "solutions"
    data = json.loads(data_path.read_text())
    rows, missing_task, missing_file = [], set(), 0
    for key, entries in data.items():
        head, _, name = key.partition(": ")
        try:
            level = int(head.split()[-1])
        except ValueError:
            continue
        if level not in levels:
            continue
        task = kernelbench / f"level{level}" / f"{name}.py"
        if not task.is_file():
            missing_task.add(key)
            continue
        for e in entries:
            cand = solutions / f"{e['file']}.py"
            if not cand.is_file():
                missing_file += 1
                continue
            num = name.split("_")[0]
            rows.append({"id": f"l{level}_{num}_{e.get('display_name', 'model')}_{e['file'][:8]}",
                         "reference": str(task.resolve()), "candidate": str(cand.resolve()),
                         "_file": e["file"], "_level": level, "_model": e.get("display_name")})
    rows.sort(key=lambda r: r["_file"])
    chosen = rows[:n]
    info = {"available": len(rows), "chosen": len(chosen), "tasks_missing": len(missing_task),
            "files_missing": missing_file,
            "levels": dict(collections.Counter(r["_level"] for r in chosen)),
            "models": dict(collections.Counter(r["_model"] for r in chosen)),
            "tasks": len({r["reference"] for r in chosen}),
            "load_inline": sum("load_inline" in Path(r["candidate"]).read_text() for r in chosen)}
    return chosen, info


def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 2)


def summary(out: Path, t0: float) -> dict[str, Any]:
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()]
    done, compile_s, build_wall, held, statuses, rules, builds = [], [], [], [], collections.Counter(), \
        collections.Counter(), collections.Counter()
    starts, lanes, slot_wait, mem_wait = [], collections.defaultdict(float), [], []
    totals, ref_start, refs = [], [], collections.Counter()  # a judgement's whole time; its reference's start-up
    for row in rows:
        statuses[row["status"]] += 1
        if row.get("rule"):
            rules[row["rule"]] += 1
        vf = row.get("verdict_file")
        path = out / vf if vf else None
        if not path or not path.exists():
            continue
        v = json.loads(path.read_text())
        done.append(os.path.getmtime(path) - t0)
        ex = (v.get("evidence") or {}).get("executor") or {}
        d = v.get("durations_s") or {}
        if ex.get("prebuild") in ("built", "compile_error") and ex.get("prebuild_compile_s"):
            compile_s.append(float(ex["prebuild_compile_s"]))
        elif ex.get("prebuild") in ("taken unbuilt", "built before", "none", None) and d.get("compile"):
            compile_s.append(float(d["compile"]))  # built by the judgement itself (or a compile error)
        if d.get("build") is not None:
            build_wall.append(float(d["build"]))
        if d.get("exclusive") is not None:
            held.append(float(d["exclusive"]))
            lanes[ex.get("lane") or "?"] += float(d["exclusive"])
        starts.append(done[-1] - float(d.get("total") or 0.0))
        slot_wait.append(float(ex.get("slot_wait_s") or 0.0))
        mem_wait.append(float(d.get("memory_wait") or 0.0))
        builds[ex.get("prebuild", "?")] += 1
        ev = v.get("evidence") or {}
        if d.get("total") is not None and "worker_start_s" in ev:  # judged, not refused before its workers
            totals.append(float(d["total"]))
            refs[str(ev.get("reference_worker", "own"))[:5]] += 1  # "spare" (sandbox/lane/spares.py) or its own
            if (ev["worker_start_s"] or {}).get("reference") is not None:
                ref_start.append(float(ev["worker_start_s"]["reference"]))
    done.sort()
    s: dict[str, Any] = {"judged": len(rows), "statuses": dict(statuses), "rules": dict(rules.most_common(8)),
                         "prebuild": dict(builds)}
    if done:
        s.update(first_verdict_s=round(done[0], 1), last_verdict_s=round(done[-1], 1),
                 per_min=round(60 * len(done) / done[-1], 2),
                 per_min_after_first=round(60 * (len(done) - 1) / max(1e-9, done[-1] - done[0]), 2))
    s.update(compile_n=len(compile_s), compile_median_s=_pct(compile_s, 0.5), compile_p10_s=_pct(compile_s, 0.1),
             compile_p90_s=_pct(compile_s, 0.9), build_wall_median_s=_pct(build_wall, 0.5),
             held_median_s=_pct(held, 0.5), held_p90_s=_pct(held, 0.9))
    if compile_s:
        s["compile_at_most_20s"] = sum(c <= 20 for c in compile_s)
    if done and starts:  # the share of the judgements' span each GPU was held
        span = max(1e-9, done[-1] - min(starts))
        s["gpu_busy"] = {k: round(v / span, 2) for k, v in sorted(lanes.items())}
    s.update(slot_wait_median_s=_pct(slot_wait, 0.5), slot_wait_max_s=_pct(slot_wait, 1.0),
             memory_wait_median_s=_pct(mem_wait, 0.5), memory_wait_max_s=_pct(mem_wait, 1.0),
             total_median_s=_pct(totals, 0.5), reference_start_median_s=_pct(ref_start, 0.5),
             reference_workers=dict(refs))
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("manifest")
    m.add_argument("--leaderboard", type=Path, required=True)
    m.add_argument("--kernelbench", type=Path, required=True, help="the checkout's KernelBench/ folder (levelL/)")
    m.add_argument("--n", type=int, default=100)
    m.add_argument("--levels", default="1,2")
    m.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("summary")
    s.add_argument("batch_out", type=Path)
    s.add_argument("t0", type=float)
    s.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    if a.cmd == "manifest":
        chosen, info = pick(a.leaderboard, a.kernelbench, a.n, tuple(int(x) for x in a.levels.split(",")))
        a.out.write_text("".join(json.dumps({k: v for k, v in r.items() if not k.startswith("_")}) + "\n"
                                 for r in chosen))
        print(json.dumps(info))
        return 0 if chosen else 1
    res = summary(a.batch_out, a.t0)
    print(json.dumps(res))
    if a.json:
        a.json.write_text(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
