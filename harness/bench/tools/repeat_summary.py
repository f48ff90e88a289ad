"""Summarise `harness eval --json` verdicts of the same kernel (harness/bench/tools/gpu_repeat.sh): per
callable the median, its 95% CI, n, the share of samples within 5% of the fastest decile (one
mode or two), the lead and the host enqueue times; then whether each pair of candidate medians
lies inside the other's CI (issue #3's repeat criterion)."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np


def load(paths: list[str]) -> dict[str, dict]:
    out = {}
    for p in paths:
        try:
            out[Path(p).stem] = json.loads(Path(p).read_text())
        except (OSError, ValueError) as e:
            print(f"{Path(p).stem}: no verdict ({e})")
    return out


def main(paths: list[str]) -> int:
    vs = load(paths)
    print(f"{'session':<8} {'callable':<10} {'median us':>10} {'CI 95%':>20} {'n':>5} {'fast share':>10} "
          f"{'lead us':>8} {'enqueue us':>10}")
    for name, v in vs.items():
        enq = v.get("evidence", {}).get("enqueue_us", {})
        for c, m in v.get("timings", {}).items():
            s = np.asarray(m.get("samples_us") or [m["median_us"]])
            floor = float(np.quantile(s, 0.1))
            fast = float(np.mean(s <= 1.05 * floor))
            print(f"{name:<8} {c:<10} {m['median_us']:>10.2f} [{m['ci_low_us']:>8.2f}, {m['ci_high_us']:>8.2f}] "
                  f"{m['n']:>5} {fast:>10.2f} {enq.get('lead_us', '-'):>8} {enq.get('median', {}).get(c, '-'):>10}")
        if v.get("status") != "valid":
            print(f"{name}: {v.get('status')} {v.get('rule')} {v.get('message', '')[:200]}")
    same = [n for n in vs if n.startswith("lead")]
    for a, b in itertools.combinations(same, 2):
        ma, mb = vs[a]["timings"]["candidate"], vs[b]["timings"]["candidate"]
        ok = ma["ci_low_us"] <= mb["median_us"] <= ma["ci_high_us"] and mb["ci_low_us"] <= ma["median_us"] <= mb["ci_high_us"]
        print(f"repeat {a} vs {b}: {ma['median_us']:.2f} vs {mb['median_us']:.2f} us: "
              f"{'AGREE (each median inside the other CI)' if ok else 'DISAGREE'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
