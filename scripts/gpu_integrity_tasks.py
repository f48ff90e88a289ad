#!/usr/bin/env python3
"""Issue 25 on a GPU: Triton's pointer-keyed autotune under the harness's cache, and the task check.

    python3 scripts/gpu_integrity_tasks.py            # about 3-6 minutes on an H100

1. The real Triton, TRITON_CACHE_AUTOTUNING=1, sandbox/tritonkeys.py installed: a kernel autotuned
   with key=['x_ptr'] runs and matches torch; a kernel keyed on an int still writes its tuning.
2. The conformance rows triton_autotune_ptr_key (was runtime_error) and triton_softmax_autotune
   (the cached path, an honest control) judged as scripts/gpu_conformance.py does: both valid.
3. The task check on CUDA at the default profile: the degenerate fixture is degenerate; the
   KernelBench fixtures and all 113 bundled ops are not.
4. `harness eval --device cuda` on the degenerate fixture: exit 2, one line naming task.degenerate.

Prints one JSON line per step, then a short table; exit 1 when any step disagrees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

DEGENERATE = REPO / "tests" / "fixtures" / "degenerate" / "23_Conv3d_GroupNorm_Mean.py"


def triton_probe() -> tuple[bool, str]:
    from tests.evaluator.test_tritonkeys import GPU_SCRIPT

    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "ptr_key.py"
        script.write_text(GPU_SCRIPT)
        env = {**os.environ, "TRITON_CACHE_AUTOTUNING": "1", "TRITON_CACHE_DIR": str(Path(d) / "triton")}
        r = subprocess.run([sys.executable, str(script), str(REPO)], env=env, capture_output=True, text=True,
                           timeout=300)
    if r.returncode != 0:
        return False, r.stderr.strip().splitlines()[-1][:200] if r.stderr.strip() else f"exit {r.returncode}"
    files = json.loads(r.stdout.split("autotune files", 1)[1])
    return files == ["relu_n.autotune.json"], f"autotune files written: {files}"


def conformance() -> list[tuple[str, bool, str]]:
    import gpu_conformance

    from tests.adversarial.redteam import warm_build_cache
    from tests.conformance.manifest import rows

    out = []
    for row in rows("cuda", "autotune"):
        try:
            warm_build_cache(row.path())
        except Exception:  # noqa: BLE001 - the judgement reports a failed build
            pass
        rec = gpu_conformance.judge(row, "strict", 1.0)
        print(json.dumps(rec), flush=True)
        out.append((row.kernel, rec["agree"], f"{rec['status']} {rec['rule'] or ''} ({rec['wall_s']} s)".strip()))
    return out


def task_check() -> tuple[bool, str]:
    from harness.suite.checks import lint
    from harness.suite.suites import resolve

    tasks = [*resolve(str(DEGENERATE)), *resolve(str(REPO / "tests" / "fixtures" / "kernelbench")), *resolve("full")]
    t = time.monotonic()
    with tempfile.TemporaryDirectory() as d:
        results = lint(tasks, device="cuda", build_dir=d)
    wall = time.monotonic() - t
    degenerate = sorted(r.task for r in results if r.degenerate)
    undecided = sorted(r.task for r in results if r.degenerate is None)
    for r in results:
        if r.degenerate is not False:
            print(json.dumps({"task": r.task, "degenerate": r.degenerate, "evidence": r.evidence()}), flush=True)
    ok = degenerate == ["23_Conv3d_GroupNorm_Mean"] and not undecided and len(results) == 119
    return ok, f"{len(results)} tasks in {wall:.0f} s: degenerate {degenerate}, undecided {undecided}"


def eval_refusal() -> tuple[bool, str]:
    cand = REPO / "tests" / "conformance" / "kernels" / "triton_relu.py"
    r = subprocess.run([sys.executable, "-m", "harness", "eval", str(DEGENERATE), str(cand), "--device", "cuda",
                        "--json"], cwd=REPO, capture_output=True, text=True, timeout=600)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    ok = r.returncode == 2 and len(errors) == 1 and "task.degenerate" in errors[0] and "Traceback" not in r.stderr
    return ok, f"exit {r.returncode}: {(errors or [r.stderr[-200:]])[0][:160]}"


def main() -> int:
    t0 = time.monotonic()
    rows: list[tuple[str, bool, str]] = []
    ok, what = triton_probe()
    rows.append(("triton: key=['x_ptr'] with the disk cache on", ok, what))
    print(json.dumps({"step": rows[-1][0], "ok": ok, "what": what}), flush=True)
    rows += [(f"conformance: {k}", ok, what) for k, ok, what in conformance()]
    ok, what = task_check()
    rows.append(("task check on cuda (fixtures + 113 ops)", ok, what))
    print(json.dumps({"step": rows[-1][0], "ok": ok, "what": what}), flush=True)
    ok, what = eval_refusal()
    rows.append(("harness eval refuses the degenerate task", ok, what))
    print(json.dumps({"step": rows[-1][0], "ok": ok, "what": what}), flush=True)
    print(f"\n{'step':48s} ok   what")
    for name, ok, what in rows:
        print(f"{name:48s} {'yes' if ok else 'NO ':4s} {what[:150]}")
    bad = sum(not ok for _, ok, _ in rows)
    print(f"\n{len(rows) - bad}/{len(rows)} agree, {time.monotonic() - t0:.0f} s", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
