#!/usr/bin/env python3
"""The whole GPU check in one call: environment, GPU-marked tests (evaluator + red team),
a repeated measurement, and an offline EvoEngineer run with CUDA candidates.

Run on a machine with a CUDA GPU, from the repository root:

    python3 harness/bench/tools/gpu_check.py [--steps env,suite,evaluator,redteam,offline,conformance,repeat,run,throughput] [--out DIR] [--budget-s 560]

The pytest steps (suite, evaluator, redteam, offline, conformance) run the gpu-marked tests of one
file each through harness/bench/tools/gpu_tests.py, which records every test's outcome under docs/records/gpu-runs/.
To run *every* gpu-marked test in parts that each fit one device call, use that script directly
(``python3 harness/bench/tools/gpu_tests.py --list``, then ``--part N`` or ``--missing``).

Each step runs as a subprocess with its own time limit; its full log goes to OUT/<step>.log and
a JSON summary to OUT/gpu_check.json. The last thing printed is a short table (step, status,
seconds, key numbers), so the tail of the output is enough to read the result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PY = sys.executable
sys.path.insert(0, str(ROOT / "harness" / "bench" / "tools"))


def sh(cmd: list[str] | str, log: Path, timeout: float, env: dict | None = None) -> tuple[int, str, float]:
    t0 = time.monotonic()
    e = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=e, shell=isinstance(cmd, str), timeout=timeout,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as ex:
        rc, out = 124, (ex.stdout or b"").decode() if isinstance(ex.stdout, bytes) else (ex.stdout or "")
    dt = time.monotonic() - t0
    log.write_text(out)
    return rc, out, dt


def step_env(out: Path, limit: float) -> dict:
    code = (
        "import torch, sys, platform, subprocess;"
        "print('python', sys.version.split()[0]); print('torch', torch.__version__, 'cuda', torch.version.cuda);"
        "p=torch.cuda.get_device_properties(0) if torch.cuda.is_available() else None;"
        "print('gpu', p.name if p else None, 'sms', p.multi_processor_count if p else None,"
        " 'mem_gib', round(p.total_memory/2**30,1) if p else None, 'l2_mb', getattr(p,'L2_cache_size',0)/2**20 if p else None)"
    )
    rc, txt, dt = sh([PY, "-c", code], out / "env.log", limit)
    rc2, txt2, _ = sh("nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nvcc --version | tail -2;"
                      " which bwrap unshare; python3 -m harness doctor", out / "env2.log", limit)
    return {"rc": rc, "seconds": dt, "summary": (txt + txt2).strip().splitlines()[:20]}


def _pytest(out: Path, limit: float, name: str, paths: list[str]) -> dict:
    """The gpu-marked tests of ``paths``, through harness/bench/tools/gpu_tests.py: recorded with node ids and
    outcomes in docs/records/gpu-runs/ (and $OUT), so that the CI coverage check sees what ran."""
    import gpu_tests

    nodes = gpu_tests.gpu_nodes(paths)
    tests, rc, dt = gpu_tests.run_nodes(nodes, limit, out / f"{name}.log")
    record = gpu_tests.write_record(f"check-{name}", tests, rc, dt, gpu_tests.machine())[0]
    counts: dict[str, int] = {}
    for t in tests.values():
        counts[t["outcome"]] = counts.get(t["outcome"], 0) + 1
    fails = [f"{t['outcome'].upper()} {n}" for n, t in tests.items() if t["outcome"] in ("failed", "error", "not_run")]
    head = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f" (record {record.name})"
    return {"rc": rc, "seconds": dt, "summary": [head] + fails[:30]}


def step_suite(out: Path, limit: float) -> dict:
    return _pytest(out, limit, "suite", ["tests/suite/test_suite_gpu.py"])


def step_evaluator(out: Path, limit: float) -> dict:
    return _pytest(out, limit, "evaluator", ["tests/evaluator/test_gpu.py"])


def step_redteam(out: Path, limit: float) -> dict:
    return _pytest(out, limit, "redteam", ["tests/adversarial/test_redteam_gpu.py"])


def step_offline(out: Path, limit: float) -> dict:
    return _pytest(out, limit, "offline", ["tests/llm/test_llm_offline_cuda.py"])


def step_conformance(out: Path, limit: float) -> dict:
    return _pytest(out, limit, "conformance", ["tests/conformance/test_conformance_gpu.py"])


def step_throughput(out: Path, limit: float) -> dict:
    rc, txt, dt = sh([PY, "harness/bench/tools/gpu_throughput.py", "--out", str(out), "--budget-s", str(int(limit - 20))],
                     out / "throughput.log", limit)
    return {"rc": rc, "seconds": dt, "summary": txt.strip().splitlines()[-14:]}


def step_repeat(out: Path, limit: float) -> dict:
    """The same kernel judged in two separate sessions: medians within each other's CIs?"""
    ref = "tests/adversarial/tasks/relu.py"
    cand = "tests/adversarial/candidates/honest_cuda_relu.py"
    res = []
    for i in range(2):
        rc, txt, _ = sh([PY, "-m", "harness", "eval", ref, cand, "--device", "cuda", "--mode", "final", "--json"],
                        out / f"repeat{i}.log", limit / 2)
        try:
            v = json.loads(txt[txt.index("{"):])
            m = v["timings"]["candidate"]
            res.append((m["median_us"], m["ci_low_us"], m["ci_high_us"], m["n"]))
        except Exception as e:  # noqa: BLE001
            res.append(None)
            (out / f"repeat{i}.err").write_text(f"{e}\n{txt[-3000:]}")
    ok = all(res) and res[0][1] <= res[1][0] <= res[0][2] and res[1][1] <= res[0][0] <= res[1][2]
    return {"rc": 0 if ok else 1, "seconds": 0, "summary": [f"session{i}: median/ci_low/ci_high/n = {r}" for i, r in enumerate(res)]
            + [f"medians within each other's CIs: {ok}"]}


def step_run(out: Path, limit: float) -> dict:
    results = out / "results"
    cmd = [PY, "-m", "harness", "run", "--method", "evoengineer", "--llm", "offline", "--ops",
           os.environ.get("GPU_CHECK_OPS", "relu,softmax,matmul_square"), "--device", "cuda",
           "--budget", os.environ.get("GPU_CHECK_BUDGET", "4"), "--seed", "0", "--results", str(results),
           "--run-id", "gpu-check-evoengineer"]
    rc, txt, dt = sh(cmd, out / "run.log", limit)
    return {"rc": rc, "seconds": dt, "summary": txt.strip().splitlines()[-15:]}


WEIGHTS = {"env": 60, "suite": 240, "evaluator": 240, "redteam": 520, "offline": 360, "conformance": 520,
           "repeat": 150, "run": 360, "throughput": 560}
STEPS = {"env": step_env, "suite": step_suite, "evaluator": step_evaluator, "redteam": step_redteam,
         "offline": step_offline, "conformance": step_conformance, "repeat": step_repeat, "run": step_run, "throughput": step_throughput}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", default="env,suite,evaluator,redteam,offline,repeat,run")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-check-out"))
    ap.add_argument("--budget-s", type=float, default=560.0, help="total seconds for all steps")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    steps = [s for s in args.steps.split(",") if s]
    t_end = time.monotonic() + args.budget_s
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "steps": {}}
    for i, name in enumerate(steps):
        left = t_end - time.monotonic()
        # each step gets its usual share, never more than what is left (minus a little for the rest)
        limit = max(20.0, min(WEIGHTS.get(name, 120), left - 10 * (len(steps) - i - 1)))
        print(f"== {name} (limit {limit:.0f}s)", flush=True)
        r = STEPS[name](out, limit)
        report["steps"][name] = r
        for line in r["summary"]:
            print(f"   {line}", flush=True)
    (out / "gpu_check.json").write_text(json.dumps(report, indent=2))
    print("\nstep      rc  seconds  summary")
    for name, r in report["steps"].items():
        first = r["summary"][0] if r["summary"] else ""
        print(f"{name:9s} {r['rc']:>3}  {r['seconds']:7.1f}  {first[:90]}")
    return 0 if all(r["rc"] == 0 for r in report["steps"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
