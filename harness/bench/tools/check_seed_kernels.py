"""Judge every shipped seed kernel like a candidate (FINAL mode, the judging policy), print a table.

    python harness/bench/tools/check_seed_kernels.py                 # on the GPU: the cuda seeds
    python harness/bench/tools/check_seed_kernels.py --device cpu    # the C++ seeds (CPU path)
    python harness/bench/tools/check_seed_kernels.py --profile small # small shapes (quicker)

Every row must read ``valid`` (a seed is an honest kernel; an invalid one is a bug to fix in
reference_ops/seeds/). Exit 1 when any seed is not valid.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # run as `python3 harness/bench/tools/...` from the checkout

from harness.policy import eval_config
from harness.suite.seeds import load_seed, seeded_ops, shipped_seeds_dir
from harness.suite.suites import find_task
from sandbox.contract import Mode, evaluate


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--max-timing-s", type=float, default=2.0)
    ap.add_argument("--jobs", type=int, default=8, help="seeds judged side by side (default 8)")
    args = ap.parse_args()
    language = "cuda" if args.device.startswith("cuda") else "cpp"
    root = shipped_seeds_dir()
    ops = list(seeded_ops(language, root))

    def one(op: str) -> tuple[str, str, str, dict[str, str], float, str]:
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
        return (op, v.status.value, v.rule or "-", sp, round(time.monotonic() - t0, 1),
                (v.message or "").splitlines()[0][:80] if not v.valid and v.message else "")

    # judged side by side (builds overlap; the device lock still times one judgement at a time),
    # each row printed as it ends, so a cut run still shows what finished
    print(f"{'op':15} {'status':14} {'rule':24} {'speedups':28} {'s':>6}  message", flush=True)
    rows = []
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for row in pool.map(one, ops):
            op, st, rule, sp, sec, msg = row
            print(f"{op:15} {st:14} {rule:24} {str(sp):28} {sec:>6}  {msg}", flush=True)
            rows.append(row)
    bad = sum(r[1] != "valid" for r in rows)
    print(f"{len(rows) - bad}/{len(rows)} seed kernels valid on {args.device} ({language})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
