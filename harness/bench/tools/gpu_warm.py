#!/usr/bin/env python3
"""Build red-team candidates' extensions into the evaluator's build cache, in parallel.

    python3 harness/bench/tools/gpu_warm.py honest_cuda_relu honest_cuda_sum ...   # file stems under candidates/
    python3 harness/bench/tools/gpu_warm.py --all-cuda                            # every candidate with CUDA sources

The red-team tests judge one candidate at a time, and each CUDA candidate's first judgement
spends most of its time in nvcc. Warming the cache first (one build per candidate, up to
``--jobs`` at once, each in its own child process: tests/adversarial/redteam.py's
``warm_build_cache``) leaves the tests' time to judging. Prints one line per candidate.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tests.adversarial.redteam import CANDIDATES, warm_build_cache  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--all-cuda", action="store_true", help="every candidate whose source has cuda_sources")
    ap.add_argument("--jobs", type=int, default=8)
    a = ap.parse_args(argv)
    names = list(a.names)
    if a.all_cuda:
        names += [p.stem for p in sorted(CANDIDATES.glob("*.py"))
                  if "cuda_sources" in p.read_text() and p.stem not in names]
    if not names:
        ap.error("name candidates or pass --all-cuda")

    def one(name: str) -> tuple[str, float, str]:
        t = time.monotonic()
        try:
            warm_build_cache(name)
            return name, time.monotonic() - t, "built"
        except Exception as e:  # a candidate that does not build is the judge's business
            return name, time.monotonic() - t, f"not built ({type(e).__name__})"

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for name, dt, what in pool.map(one, names):
            print(f"{name:40s} {what:24s} {dt:6.1f} s", flush=True)
    print(f"warmed {len(names)} candidates in {time.monotonic() - t0:.1f} s with {a.jobs} jobs", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
