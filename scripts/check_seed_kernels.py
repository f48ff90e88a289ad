"""Judge every shipped seed kernel like a candidate (FINAL mode, the judging policy), print a table.

    python scripts/check_seed_kernels.py                 # on the GPU: the cuda seeds
    python scripts/check_seed_kernels.py --device cpu    # the C++ seeds (CPU path)
    python scripts/check_seed_kernels.py --profile small # small shapes (quicker)

Every row must read ``valid`` (a seed is an honest kernel; an invalid one is a bug to fix in
reference_ops/seeds/). Exit 1 when any seed is not valid.
"""

from __future__ import annotations

import argparse
import sys
import time

from harness.policy import eval_config
from harness.suite.seeds import load_seed, seeded_ops, shipped_seeds_dir
from harness.suite.suites import find_task
from sandbox.contract import Mode, evaluate


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--max-timing-s", type=float, default=2.0)
    args = ap.parse_args()
    language = "cuda" if args.device.startswith("cuda") else "cpp"
    root = shipped_seeds_dir()
    bad = 0
    rows = []
    for op in seeded_ops(language, root):
        task = find_task(op)
        seed = load_seed(op, language, root)
        assert seed is not None
        opts = {"max_timing_s": args.max_timing_s}
        if args.profile:
            opts["profile"] = args.profile
        cfg = eval_config(Mode.FINAL, args.device, task=task, sandbox="process", rules="strict",
                          seed=0, overrides={}, **opts)
        t0 = time.monotonic()
        v = evaluate(task, seed.source, cfg)
        sp = {k: f"{s.value:.2f}x" for k, s in v.speedups.items()}
        rows.append((op, v.status.value, v.rule or "-", sp, round(time.monotonic() - t0, 1),
                     (v.message or "").splitlines()[0][:80] if not v.valid and v.message else ""))
        bad += not v.valid
    print(f"{'op':15} {'status':14} {'rule':24} {'speedups':28} {'s':>6}  message")
    for op, st, rule, sp, s, msg in rows:
        print(f"{op:15} {st:14} {rule:24} {str(sp):28} {s:>6}  {msg}")
    print(f"{len(rows) - bad}/{len(rows)} seed kernels valid on {args.device} ({language})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
