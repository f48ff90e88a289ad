"""Judge a big-output elementwise op (tests/evaluator/tasks/big_out.py) with an honest candidate
and print the verdict and the GB/s of the output's fetch + compare (issue 14 item 1).

    python harness/bench/tools/gpu_datapath.py                      # CUDA: profile p2g5, a 2.5 GiB output
    python harness/bench/tools/gpu_datapath.py --device cpu --profile small   # CPU smoke test (64 MiB)

The candidate is torch-only (``--allow-torch-ops``): what is measured is the judge's data path,
not a kernel. GB/s = output bytes x checks / (seconds of the candidate's ``fetch`` requests +
seconds of the reference's ``check`` requests), both on the parent's clock
(``verdict.evidence["requests"]``). Runs against whatever ``sandbox`` is on the path, so the
same script times an older checkout (``PYTHONPATH=/path/to/checkout``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:  # run as `python harness/bench/tools/gpu_datapath.py` from the checkout; PYTHONPATH wins
    sys.path.append(str(REPO))
TASK = REPO / "tests" / "evaluator" / "tasks" / "big_out.py"
CANDIDATE = '''
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0 + 1.0
'''


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--profile", default=None, help="big_out.py profile (default: p2g5 on CUDA, small on CPU)")
    ap.add_argument("--timing-s", type=float, default=2.0, help="time cap per callable")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the whole verdict as JSON too")
    a = ap.parse_args(argv)
    from sandbox.evaluate import EvalConfig, evaluate
    from sandbox.intake.task import load_task
    from sandbox.verdict import Mode

    profile = a.profile or ("p2g5" if a.device.startswith("cuda") else "small")
    task = load_task(TASK)
    n_bytes = 4 * int(task.shapes[profile]["N"])
    cfg = EvalConfig(device=a.device, mode=Mode.FEEDBACK, profile=profile, allow_torch_ops=True, seed=7,
                     baselines=("eager",), max_timing_s=a.timing_s, feedback_timing_s=a.timing_s, target_ci=0.05,
                     correctness_trials=a.trials, timeout_s=1800.0, check_fraction=0.0, gpu_hold_s=600.0)
    t0 = time.monotonic()
    v = evaluate(task, CANDIDATE, cfg)
    wall = time.monotonic() - t0
    req = v.evidence.get("requests", {})
    nf, fs = req.get("candidate.fetch", [0, 0.0])
    nc, cs = req.get("reference.check", [0, 0.0])
    print(f"device {a.device} ({v.environment.get('gpu') or 'cpu'}), profile {profile}: "
          f"output {n_bytes / 2**30:.3f} GiB; judged in {wall:.1f} s")
    print(f"verdict: {v.status.value} {v.rule or ''} {v.message}")
    if nf and nc:
        gb = n_bytes * nc / 1e9
        print(f"fetch: {nf} x {fs / nf * 1e3:.1f} ms = {n_bytes * nf / 1e9 / fs:.2f} GB/s; "
              f"check: {nc} x {cs / nc * 1e3:.1f} ms = {gb / cs:.2f} GB/s; "
              f"fetch+check: {gb / (fs + cs):.2f} GB/s")
    if "arena" in v.evidence:
        print(f"arena: {v.evidence['arena']}")
    if a.json:
        print(json.dumps(v.to_dict() if hasattr(v, "to_dict") else v.__dict__, default=str, indent=1))
    return 0 if v.status.value == "valid" else 1


if __name__ == "__main__":
    sys.exit(main())
