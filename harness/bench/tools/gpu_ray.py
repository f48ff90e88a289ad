"""Issue 27, goal 4 on one multi-GPU host: a Ray cluster of one node per GPU group against one node.

    python3 harness/bench/tools/gpu_ray.py --out OUT [--gpus-per-node 2] [--copies 4] [--budget-s 540]

Ray must be importable (on the device: the wheels of scripts/ray_wheel.py in .whl/, installed with
``pip install --target /tmp/site`` and ``PYTHONPATH=/tmp/site``). The nodes are raylets started with
``ray start`` on this host (tests/support/raycluster.py), node i seeing GPUs [i*k, (i+1)*k) through
``CUDA_VISIBLE_DEVICES`` and an equal share of the cores. Their build cache is one folder
(``HARNESS_CACHE``), as a shared filesystem would give separate hosts; with ``--warm`` a first pass
fills it (otherwise it is expected warm, e.g. from gpu_two.sh on the same machine, which uses the
same folder). Runs, each ``harness eval-batch --executor ray --ray-address`` over the conformance
set's CUDA rows repeated ``--copies`` times (gpu_two_summary.py's copies set, final mode):

    nodes1  the cluster of node 0 alone
    nodes2  node 1 joins; the same set again

then the verdicts compared (every kernel one verdict in every run, as expected) and nodes2 / nodes1
judged per minute after the first verdict. Summary in OUT/summary.txt, runs in OUT/runs.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_two_summary  # noqa: E402  (this folder's bookkeeping of the GPU runs)


def batch(name: str, manifest: Path, work: Path, cluster, args, runs: Path, say) -> None:
    out = work / name
    shutil.rmtree(out, ignore_errors=True)
    left = args.deadline - time.time()
    if left < 60:
        say(f"{name}: skipped, {left:.0f} s left")
        return
    t0 = time.time()
    cmd = [sys.executable, "-m", "harness", "eval-batch", str(manifest), "--out", str(out), "--mode", "final",
           "--device", args.device, "--max-timing-s", "2", "--jobs", str(args.jobs), "--executor", "ray",
           "--ray-address", cluster.address]
    env = {**cluster.env, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    with open(work / f"{name}.log", "w") as log:
        try:
            rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=left).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    say(f"{name}: eval-batch exit {rc} after {time.time() - t0:.1f} s on {cluster.alive_nodes()} node(s)")
    if (out / "results.jsonl").exists():
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            gpu_two_summary.run(name, str(out), t0, str(runs))
        say(buf.getvalue().rstrip())
    else:
        say((work / f"{name}.log").read_text(errors="replace")[-3000:])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--work", default="/var/tmp/kh-ray-work")
    p.add_argument("--cache", default=os.environ.get("HARNESS_CACHE", "/var/tmp/kh-two-cache"))
    p.add_argument("--gpus-per-node", type=int, default=0, help="0: half the GPUs (two nodes)")
    p.add_argument("--copies", type=int, default=4)
    p.add_argument("--cpus-per-node", type=int, default=0, help="0: half the host's cores")
    p.add_argument("--jobs", type=int, default=0, help="eval-batch --jobs (0: CPUs - 1)")
    p.add_argument("--warm", action="store_true", help="first fill the build cache with one pass of the base set")
    p.add_argument("--budget-s", type=float, default=540)
    p.add_argument("--device", default="cuda", help="cpu: a plumbing check on a machine without GPUs (every "
                   "CUDA row then fails; the nodes declare GPUs they do not have)")
    args = p.parse_args()
    args.deadline = time.time() + args.budget_s
    out, work = Path(args.out), Path(args.work)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    summary = out / "summary.txt"

    def say(line: str) -> None:
        print(line, flush=True)
        with open(summary, "a") as f:
            f.write(line + "\n")

    import ray

    from tests.support.raycluster import ray_cluster

    # the GPUs this tool may use: CUDA_VISIBLE_DEVICES where the caller set it (the host's other GPUs busy
    # with other work), else every GPU the machine shows; node i gets the i-th group of k of them
    seen = [g.strip() for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    ids = seen or [str(g) for g in range(gpu_two_summary.gpu_count())]
    gpus = len(ids)
    k = args.gpus_per_node or max(1, gpus // 2)
    cpus = args.cpus_per_node or max(2, (os.cpu_count() or 2) // 2)
    args.jobs = args.jobs or max(1, (os.cpu_count() or 2) - 1)
    say(f"gpu_ray: {gpus} GPUs, {os.cpu_count()} CPUs, Ray {ray.__version__}, nodes of {k} GPUs and {cpus} CPUs, "
        f"GPUs {','.join(ids)}, build cache {args.cache} (shared by the nodes), commit {os.environ.get('KH_COMMIT', '?')}")
    gpu_two_summary.manifest(str(work), args.copies)
    runs = work / "runs.jsonl"
    node = [{"CUDA_VISIBLE_DEVICES": ",".join(ids[i * k:(i + 1) * k]), "HARNESS_CACHE": args.cache,
             "NCCL_NVLS_ENABLE": "0"} for i in range(2)]
    t = time.time()
    with ray_cluster(work, node[:1], cpus_per_node=cpus, gpus_per_node=k, timeout=240) as cluster:
        say(f"node 0 joined after {time.time() - t:.1f} s")
        if args.warm:
            batch("warm", work / "base.jsonl", work, cluster, args, runs, say)
        batch(f"nodes1-{int(time.time())}", work / "copies.jsonl", work, cluster, args, runs, say)
        t = time.time()
        cluster.add(node[1], cpus, k, timeout=240)
        say(f"node 1 joined after {time.time() - t:.1f} s")
        batch(f"nodes2-{int(time.time())}", work / "copies.jsonl", work, cluster, args, runs, say)
        (work / "ray-status.txt").write_text(cluster.status())
        logs = cluster.log_tails()
    (work / "ray-nodes.log").write_text(logs)
    rows = [json.loads(x) for x in open(runs)] if runs.exists() else []
    by = {r["run"].split("-")[0]: r for r in rows}
    say(gpu_two_summary.agreement(rows))
    if "nodes1" in by and "nodes2" in by and by["nodes1"].get("per_min_after_first"):
        a1, a2 = by["nodes1"]["per_min_after_first"], by["nodes2"]["per_min_after_first"]
        r1, r2 = by["nodes1"]["per_min"], by["nodes2"]["per_min"]
        say(f"two nodes / one: {a2 / a1:.2f}x judged per minute after the first verdict ({a2:.2f} vs {a1:.2f}); "
            f"{r2 / r1:.2f}x from submission ({r2:.2f} vs {r1:.2f})")
    if runs.exists():
        shutil.copy(runs, out / "runs.jsonl")
    with tarfile.open(out / "ray-runs.tgz", "w:gz") as tar:
        for f in work.iterdir():
            if f.suffix in (".log", ".txt") or f.is_dir():
                tar.add(f, arcname=f.name)


if __name__ == "__main__":
    main()
