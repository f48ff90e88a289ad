"""Summary of a methods-slice store (harness/bench/tools/gpu_methods_slice.sh): one line per run, then one per
method over its seeds: ops finished, trials, valid trials, seed kernels used, spend per stage,
and the median final speedup over PyTorch eager and over the seed kernel.

    python harness/bench/tools/methods_slice_summary.py RESULTS_DIR
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # run as `python3 harness/bench/tools/...` from the checkout

from harness.store import Results
from harness.store.export import op_rows


def median(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f}x" if xs else "-"


def main(results: str) -> None:
    repo = Results.open(results)
    per_method: dict[str, dict] = defaultdict(lambda: defaultdict(list))
    print(f"{'run':36} {'device':6} {'budget':>6} {'ops':>6} {'trials':>6} {'valid':>5} "
          f"{'seeded':>6} {'x eager':>8} {'x seed':>7}  stages (trials/llm calls)")
    for run in repo.list_runs():
        rows = op_rows(repo, run.run_id)
        done = [r for r in rows if r["status"] == "finished"]
        eager = [r["speedup_eager"]["value"] for r in done if r["speedup_eager"]]
        vs_seed = [r["speedup_vs_seed"] for r in done if r.get("speedup_vs_seed")]
        stages: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in rows:
            for st, v in (r.get("stages") or {}).items():
                stages[st][0] += v.get("trials", 0)
                stages[st][1] += v.get("llm_calls", 0)
        seeded = len(run.config.get("seed_kernels", {}).get("ops") or [])
        trials, valid = sum(r["trials"] for r in rows), sum(r["valid"] for r in rows)
        st = " ".join(f"{k}={a}/{b}" for k, (a, b) in sorted(stages.items()))
        print(f"{run.run_id:36} {run.device:6} {run.budget.get('evaluations', '?'):>6} "
              f"{len(done):>2}/{len(rows):<3} {trials:>6} {valid:>5} {seeded:>6} {median(eager):>8} "
              f"{median(vs_seed):>7}  {st}")
        m = per_method[run.method]
        m["runs"].append(run.run_id)
        m["eager"] += eager
        m["seed"] += vs_seed
        m["trials"].append(trials)
        m["valid"].append(valid)
        m["ops"].append(len(done))
    print()
    print(f"{'method':22} {'runs':>4} {'ops done':>8} {'trials':>6} {'valid':>5} {'x eager (median)':>16} "
          f"{'x seed (median)':>15}")
    for name, m in sorted(per_method.items()):
        print(f"{name:22} {len(m['runs']):>4} {sum(m['ops']):>8} {sum(m['trials']):>6} {sum(m['valid']):>5} "
              f"{median(m['eager']):>16} {median(m['seed']):>15}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results")
