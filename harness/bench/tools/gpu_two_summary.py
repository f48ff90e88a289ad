"""The two-GPU measurement's bookkeeping (harness/bench/tools/gpu_two.sh): manifests, one summary per run,
and the comparison of the runs' verdicts.

    python3 harness/bench/tools/gpu_two_summary.py manifest DIR COPIES [COPIES1]   # DIR/{base,mixed,copies,copies1}.jsonl
    python3 harness/bench/tools/gpu_two_summary.py run NAME OUTDIR T0 RUNS_JSONL
    python3 harness/bench/tools/gpu_two_summary.py compare RUNS_JSONL

The base set is the conformance set's CUDA rows (real, mixed kernels; tests/conformance) and
probe #38 (a worker sees one GPU). The copies repeat it COPIES times under new ids (the same
sources: their builds are cache hits), so a run is long enough for a rate to mean something; copies1.jsonl has COPIES1 of them (the one-GPU
run: its rate is steady sooner, and the ratio compares rates, not counts).
"""

from __future__ import annotations

import collections
import json
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

PROBE = "gpu_probe_38_one_gpu"
MIXED = ("cuda_inline_relu_fast_math", "cuda_inline_softmax_pybind", "triton_relu", "triton_softmax_autotune",
         "triton_matmul_tf32", "triton_partial_gemm_epilogue", PROBE)


def _base() -> list[dict]:
    from tests.conformance.manifest import ROWS

    rows = [{"id": r.kernel, "reference": str(r.task_path()), "candidate": str(r.path())}
            for r in ROWS if r.device == "cuda" and not r.needs]
    rows.append({"id": PROBE, "reference": str(REPO / "tests/adversarial/tasks/relu.py"),
                 "candidate": str(REPO / f"tests/adversarial/candidates/{PROBE}.py")})
    return rows


def expected() -> dict[str, tuple[str, str | None]]:
    from tests.conformance.manifest import ROWS

    want = {r.kernel: r.expected("strict") for r in ROWS if r.device == "cuda" and not r.needs}
    want[PROBE] = ("valid", None)
    return want


def manifest(folder: str, copies: int, copies1: int | None = None) -> None:
    os.makedirs(folder, exist_ok=True)
    base = _base()
    with open(os.path.join(folder, "base.jsonl"), "w") as f:
        for r in base:
            f.write(json.dumps({**r, "mode": "final", "device": "cuda"}) + "\n")
    with open(os.path.join(folder, "mixed.jsonl"), "w") as f:  # one of each style and verdict, for slow runs
        for r in base:
            if r["id"] in MIXED:
                f.write(json.dumps({**r, "mode": "final", "device": "cuda"}) + "\n")
    for name, n in (("copies", copies), ("copies1", copies if copies1 is None else copies1)):
        with open(os.path.join(folder, f"{name}.jsonl"), "w") as f:
            for k in range(n):  # interleaved: each copy of the set in turn, as a user's folder would come
                for r in base:
                    f.write(json.dumps({**r, "id": f"{r['id']}#{k}", "mode": "final", "device": "cuda"}) + "\n")


def run(name: str, out: str, t0: float, runs_jsonl: str) -> None:
    want = expected()
    rows = [json.loads(x) for x in open(os.path.join(out, "results.jsonl")) if x.strip()]
    held, done_at, lanes, agree, per, waits, starts, evs = [], [], collections.Counter(), 0, {}, [], [], []
    for row in rows:
        base = row["id"].split("#")[0]
        vf = row.get("verdict_file")
        path = os.path.join(out, vf) if vf else None
        v = json.load(open(path)) if path and os.path.exists(path) else {}
        ev = v.get("evidence", {})
        d = v.get("durations_s", {})
        evs.append(ev)
        if d.get("exclusive") is not None:
            held.append(d["exclusive"] + (ev.get("warm_apart_exclusive_s") or 0.0))
        lanes[(ev.get("executor") or {}).get("lane") or v.get("device") or "?"] += 1
        got = (row["status"], row.get("rule") or None)
        ok = got == want.get(base)
        agree += ok
        if path:
            done_at.append(os.path.getmtime(path) - t0)
            starts.append(done_at[-1] - d.get("total", 0.0))
        waits.append(d.get("queue") or 0.0)
        per[row["id"]] = {"status": row["status"], "rule": row.get("rule"), "ok": ok,
                          "eager": row.get("speedup_eager"), "held": d.get("exclusive"),
                          "lane": (ev.get("executor") or {}).get("lane")}
        if not ok:
            print(f"  {name}: {row['id']} {got} want {want.get(base)}: {row.get('message')}")
    times = sorted(done_at)
    s = {"run": name, "judged": len(rows), "agree": agree, "lanes": dict(lanes)}
    if times:
        s.update(first_s=round(times[0], 1), last_s=round(times[-1], 1),
                 per_min=round(60 * len(rows) / times[-1], 2),
                 per_min_after_first=round(60 * (len(rows) - 1) / max(1e-9, times[-1] - times[0]), 2))
    if held:
        s.update(held_median_s=round(statistics.median(held), 2), held_mean_s=round(statistics.mean(held), 2),
                 wait_median_s=round(statistics.median(waits), 2), hold_cpu=hold_cpu_medians(evs))
        if times and starts:  # the share of the run's span some judgement held the GPU
            s.update(gpu_busy=round(sum(held) / max(1e-9, times[-1] - min(starts)), 2))
    print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in s.items() if k != "run"))
    with open(runs_jsonl, "a") as f:
        f.write(json.dumps({**s, "verdicts": per}) + "\n")


def hold_cpu_medians(evidences: list[dict]) -> dict[str, dict[str, float]]:
    """Median CPU and run-queue seconds over the GPU hold, per side (``evidence.hold_cpu``,
    sandbox/lane/holdcpu.py): what is left of a hold that is neither running nor waiting for a CPU
    is waiting on the GPU, on the other side, or (the judging thread) on its process's GIL."""
    out: dict[str, dict[str, float]] = {}
    for side in ("judging_thread", "reference", "candidate"):
        vals = [e["hold_cpu"][side] for e in evidences if isinstance(e.get("hold_cpu"), dict)
                and isinstance(e["hold_cpu"].get(side), dict)]
        if vals:
            out[side] = {k: round(statistics.median(x[k] for x in vals), 2) for k in ("cpu_s", "runq_s")}
            procs = [x["procs"] for x in vals if isinstance(x.get("procs"), int)]
            if procs:  # the processes of the side's tree, and where its CPU went (mean s a judgement)
                out[side]["procs_max"] = max(procs)
                names: dict[str, float] = {}
                for x in vals:
                    for k, v in (x.get("top") or {}).items():
                        names[k] = names.get(k, 0.0) + v
                top = sorted(names.items(), key=lambda kv: -kv[1])[:3]
                out[side]["top_mean_s"] = {k: round(v / len(vals), 2) for k, v in top}  # type: ignore[assignment]
    return out


def gpu_count() -> int:
    """The GPUs the machine shows (nvidia-smi -L; 0 where there is none). Shared by this folder's tools."""
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=15).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(line.startswith("GPU ") for line in out.splitlines())


def _gpus() -> str:
    """How many GPUs the "gpu2" runs used: every GPU the machine shows (two on the two-GPU kinds)."""
    return str(gpu_count() or "all")


def agreement(runs: list[dict]) -> str:
    """One line: over the runs, how many kernels got one verdict in every run and copy, and which did not."""
    verdicts: dict[str, set] = collections.defaultdict(set)
    for r in runs:
        for pid, v in r["verdicts"].items():
            verdicts[pid.split("#")[0]].add((v["status"], v["rule"]))
    differ = {k: sorted(map(str, v)) for k, v in verdicts.items() if len(v) > 1}
    return (f"verdicts over {len(runs)} runs: {len(verdicts)} kernels, "
            f"{len(verdicts) - len(differ)} with one verdict in every run and copy; differ: {differ or 'none'}")


def compare(runs_jsonl: str) -> None:
    runs = [json.loads(x) for x in open(runs_jsonl) if x.strip()]
    by = {r["run"]: r for r in runs}
    print(agreement(runs))
    lanes = sorted({k.split("-")[1] for k in by if k.startswith(("gpu1-", "gpu2-"))})
    for ln in lanes:  # the ratio at the same number of judging threads per GPU
        one = [by[k] for k in by if k.startswith(f"gpu1-{ln}-") and "per_min" in by[k]]
        two = [by[k] for k in by if k.startswith(f"gpu2-{ln}-") and "per_min" in by[k]]
        if not (one and two):
            continue
        r1, r2 = (statistics.mean(r["per_min"] for r in x) for x in (one, two))
        a1, a2 = (statistics.mean(r["per_min_after_first"] for r in x) for x in (one, two))
        print(f"{_gpus()} GPUs / one ({ln}): {r2 / r1:.2f}x judged per minute from submission ({r2:.2f} vs {r1:.2f}); "
              f"{a2 / a1:.2f}x after the first verdict ({a2:.2f} vs {a1:.2f})")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "manifest":
        manifest(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else None)
    elif cmd == "run":
        run(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    elif cmd == "compare":
        compare(sys.argv[2])
