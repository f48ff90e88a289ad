"""Does CPU load on the judging machine lengthen how long a judgement holds the GPU, and does
niceness protect it? (issue 27: on four H200s the same final judgements held a GPU 11.2 s each
against 2.5 s on one GPU, their check phase 6.2 s against 0.6 s.)

    python3 harness/bench/tools/gpu_contention.py --out OUT [--units 12] [--mode feedback]

One honest CUDA kernel (the conformance set's ``cuda_inline_relu_fast_math``) judged ``--units`` times
through ``harness eval-batch`` (one GPU, --jobs 2), under three loads: none; one busy process per
core at nice 0; the same at nice 19 (the niceness the harness gives its builds). A load ``ctx:R``
instead churns CUDA contexts on every *other* GPU at R contexts a second in all
(``gpu_driverlock.py``'s churners: each cycle a new process that makes a context, writes 256 MiB
and exits); the judgements then run on the first GPU only. Per load: the median GPU held
(``durations_s.exclusive``), check, time, warm and close, the median seconds of each worker request
over the unit (``evidence.requests``), and the verdicts.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

KERNEL = "cuda_inline_relu_fast_math"


def _spin(nice: int) -> None:
    os.nice(nice)
    while True:
        pass


def main() -> None:
    from tests.conformance.manifest import ROWS

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--units", type=int, default=12)
    p.add_argument("--mode", default="feedback")
    p.add_argument("--loads", default="none,0,19", help="comma-separated: none, or a niceness for the hogs")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    row = next(r for r in ROWS if r.kernel == KERNEL)
    manifest = out / "units.jsonl"
    units = [json.dumps({"id": f"{KERNEL}#{i}", "reference": str(row.task_path()), "candidate": str(row.path()),
                         "mode": a.mode, "device": "cuda"}) + "\n" for i in range(a.units)]
    manifest.write_text("".join(units))
    (out / "warm.jsonl").write_text(units[0])
    lines = [f"gpu_contention: {os.cpu_count()} CPUs, {a.units} units of {KERNEL}, {a.mode} mode, commit "
             f"{os.environ.get('KH_COMMIT', '?')}"]
    gpus = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                          text=True).stdout.split()
    env = {**os.environ}
    if any(x.startswith("ctx:") for x in a.loads.split(",")):
        env["CUDA_VISIBLE_DEVICES"] = gpus[0]  # every load judges on the first GPU; churn goes to the rest
    churn_tool = REPO / "harness" / "bench" / "tools" / "gpu_driverlock.py"
    for load in ["warm", *a.loads.split(",")]:  # "warm": one unit first, so every load meets a built cache
        hogs = []
        if load.startswith("ctx:"):
            others = gpus[1:] or gpus
            k = 2 * len(others)
            hogs = [subprocess.Popen([sys.executable, str(churn_tool), "churn-loop", others[i % len(others)],
                                      str(k / float(load[4:]))]) for i in range(k)]
        elif load not in ("none", "warm"):
            ctx = multiprocessing.get_context("fork")
            hogs = [ctx.Process(target=_spin, args=(int(load),), daemon=True) for _ in range(os.cpu_count() or 1)]
            for h in hogs:
                h.start()
        res = out / f"run-{load}"
        t0 = time.time()
        batch = out / "warm.jsonl" if load == "warm" else manifest
        rc = subprocess.run([sys.executable, "-m", "harness", "eval-batch", str(batch), "--out", str(res),
                             "--mode", a.mode, "--device", "cuda", "--jobs", "2"],
                            cwd=REPO, capture_output=True, text=True, timeout=400, env=env).returncode
        for h in hogs:
            h.kill()
        if load.startswith("ctx:"):
            subprocess.run(["pkill", "-f", "gpu_driverlock.py churn-once"], check=False)
        ds: dict[str, list[float]] = {}
        reqs: dict[str, list[float]] = {}
        statuses: dict[str, int] = {}
        for r in (json.loads(x) for x in open(res / "results.jsonl") if x.strip()):
            statuses[r["status"]] = statuses.get(r["status"], 0) + 1
            if r.get("verdict_file"):
                v_ = json.load(open(res / r["verdict_file"]))
                for k, v in (v_.get("durations_s") or {}).items():
                    if isinstance(v, (int, float)):
                        ds.setdefault(k, []).append(v)
                for k, (_n, s_) in ((v_.get("evidence") or {}).get("requests") or {}).items():
                    reqs.setdefault(k, []).append(s_)
        med = {k: round(statistics.median(ds[k]), 2) for k in ("exclusive", "warm", "check", "time", "close") if k in ds}
        rmed = {k: round(statistics.median(v), 3) for k, v in sorted(reqs.items()) if statistics.median(v) >= 0.01}
        lines.append(f"load {load:>4}: exit {rc}, {time.time() - t0:.0f} s, {statuses}, medians {med}, requests {rmed}")
        print(lines[-1], flush=True)
    (out / "summary.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
