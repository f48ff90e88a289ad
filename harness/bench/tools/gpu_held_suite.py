#!/usr/bin/env python3
"""How long each op of the suite holds the GPU per judgement (issue 27, goal 1): every op of
reference_ops/ judged with its own reference as the candidate (a subclass ``ModelNew(Model)``,
``--allow-torch-ops``: the judge's data path and protocol are measured, not a kernel), through
``harness eval-batch`` in feedback mode at the op's default shapes, then one line per op and the
spread of the GPU-held seconds outside the timing phase (``durations_s.exclusive - time``).

    python3 harness/bench/tools/gpu_held_suite.py --out /tmp/held-suite            # on the GPU machine
    python3 harness/bench/tools/gpu_held_suite.py --out /tmp/h --device cpu --limit 3   # a CPU smoke run

``--kernelbench DIR`` adds the task files of a KernelBench level folder at their published sizes
(goal 1 names level-1/2 tasks), judged the same way; ``--kernelbench-only`` judges only those. The
device reaches no network: copy the folder into an ignored path of the checkout and carry it, e.g.
``git -C <KernelBench mirror> archive HEAD KernelBench/level2 | tar x -C .kb`` with ``.kb`` in
``.git/info/exclude``, then ``--kernelbench .kb/KernelBench/level2 --kb-limit 30``.
The table gives each judgement's setups (``evidence.setups``: the two workers' models built side
by side) beside the reference's and the candidate's own setup seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _tasks(kernelbench: Path | None, kb_limit: int | None, suite: bool, kb_from: int = 0) -> list[Path]:
    refs = [r for r in sorted((REPO / "reference_ops").glob("*/*.py")) if r.name != "__init__.py"] if suite else []
    if kernelbench is not None:
        kb = sorted(kernelbench.glob("*.py"), key=lambda p: (len(p.stem.split("_")[0]), p.stem))[kb_from:]
        refs += kb[:kb_limit] if kb_limit else kb
    return refs


def manifest(out: Path, limit: int | None, kernelbench: Path | None = None, kb_limit: int | None = None,
             suite: bool = True, kb_from: int = 0) -> Path:
    cands = out / "candidates"
    cands.mkdir(parents=True, exist_ok=True)
    lines = []
    for ref in _tasks(kernelbench, kb_limit, suite, kb_from):
        c = cands / f"{ref.parent.name}__{ref.name}"
        c.write_text(ref.read_text() + "\n\nclass ModelNew(Model):\n    pass\n")
        lines.append(json.dumps({"id": f"{ref.parent.name}/{ref.stem}", "reference": str(ref), "candidate": str(c)}))
    lines = lines[:limit] if limit else lines
    m = out / "manifest.jsonl"
    m.write_text("\n".join(lines) + "\n")
    return m


def summarize(out: Path) -> str:
    rows = []
    for f in sorted((out / "batch" / "verdicts").glob("*.json")):
        v = json.loads(f.read_text())
        d = v.get("durations_s") or {}
        held, tm = d.get("exclusive"), d.get("time") or 0.0
        ev = v.get("evidence") or {}
        arena, req = ev.get("arena") or {}, ev.get("requests") or {}
        setups = f"{(ev.get('setups') or [0, None])[1]}/{req.get('reference.setup', [0, 0])[1]}" \
                 f"/{req.get('candidate.setup', [0, 0])[1]}"
        rows.append((f.stem, v.get("status"), held, tm, None if held is None else round(held - tm, 3), arena.get("device"),
                     setups))
    lines = [f"{'op':45} {'status':14} {'held_s':>7} {'time_s':>7} {'held-time':>9} {'device_arena':12} "
             "setups wall/ref/cand s"]
    lines += [f"{r[0]:45} {str(r[1]):14} {r[2]!s:>7} {r[3]!s:>7} {r[4]!s:>9} {r[5]!s:12} {r[6]}" for r in rows]
    rest = sorted(r[4] for r in rows if r[4] is not None)
    if rest:
        q = statistics.quantiles(rest, n=10) if len(rest) > 1 else rest * 9
        lines.append(f"\n{len(rows)} judged ({sum(r[1] == 'valid' for r in rows)} valid); GPU held outside the timing "
                     f"phase: median {statistics.median(rest):.2f} s, p90 {q[8]:.2f} s, max {rest[-1]:.2f} s; "
                     f"{sum(x <= 1.5 for x in rest)} of {len(rest)} at most 1.5 s; device arena in "
                     f"{sum(bool(r[5]) for r in rows)}")
        lines += [f"  over 1.5 s: {r[0]} {r[4]} s" for r in rows if r[4] is not None and r[4] > 1.5]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--timing-s", type=float, default=1.0)
    ap.add_argument("--limit", type=int, default=None, help="only the first N ops")
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--kernelbench", type=Path, default=None, help="a KernelBench level folder: its tasks too")
    ap.add_argument("--kb-limit", type=int, default=None, help="only its first N tasks (by number)")
    ap.add_argument("--kb-from", type=int, default=0, help="skip its first N tasks (by number; before --kb-limit)")
    ap.add_argument("--kernelbench-only", action="store_true", help="not the suite's ops")
    a = ap.parse_args()
    # the manifest's paths resolve against the manifest's folder (eval-batch), so make them absolute
    a.kernelbench = a.kernelbench.resolve() if a.kernelbench else None
    a.out.mkdir(parents=True, exist_ok=True)
    if not a.summary_only:
        m = manifest(a.out, a.limit, a.kernelbench, a.kb_limit, suite=not a.kernelbench_only, kb_from=a.kb_from)
        cmd = [sys.executable, "-m", "harness", "eval-batch", str(m), "--out", str(a.out / "batch"), "--mode", "feedback",
               "--device", a.device, "--allow-torch-ops", "--jobs", str(a.jobs), "--max-timing-s", str(a.timing_s)]
        if a.kernelbench:  # level 2 has degenerate tasks (outputs that do not move with their inputs): the data
            cmd.append("--allow-degenerate")  # path is what is measured here, so judge them too (recorded)
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, cwd=REPO, check=False)
    s = summarize(a.out)
    (a.out / "summary.txt").write_text(s + "\n")
    print(s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
