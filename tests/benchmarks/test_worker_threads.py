"""What torch's intra-op pool costs a worker on a loaded host (sandbox/worker/session.py: one
intra-op thread per worker, on a GPU too since session 23).

A worker's warm-up starts torch's pool. Without ``OMP_NUM_THREADS`` the pool has a thread per core.
Every CPU op over its grain (32K elements) then wakes all of them and waits for the last one. On a
host whose cores the next judgements' start-ups keep busy, that wait is the op's time. On the
four-H200 host (64 cores, load 45-54) a candidate's threads waited up to 28 s for a CPU over a 2.2 s
hold (docs/records/gpu-check-2026-11-27-session23.md).

Here one worker-like process, with two processes spinning on the box's CPUs, answers "run 20 adds
of 64K floats". It has four intra-op threads per CPU (the per-core pool, oversubscribed as on that
host) or one thread. Compare the two benchmarks' times."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

WORKER = (
    "import sys, torch\n"
    "x = torch.zeros(1 << 16)\n"
    "x.add_(1)\n"  # the pool starts, as in the worker's warm-up
    "for line in sys.stdin:\n"
    "    for _ in range(20):\n"
    "        x.add_(1)\n"
    "    sys.stdout.write('ok\\n'); sys.stdout.flush()\n"
)
SPIN = "while True: pass\n"


@pytest.fixture(scope="module")
def load():
    cpus = len(os.sched_getaffinity(0))
    spin = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(cpus)]
    yield cpus
    for p in spin:
        p.kill()
        p.wait()


def _worker(threads: int) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "OMP_WAIT_POLICY": "PASSIVE"}
    return subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)


def _bench(benchmark, threads: int) -> None:
    w = _worker(threads)
    try:
        def ask() -> None:
            w.stdin.write("go\n")
            w.stdin.flush()
            assert w.stdout.readline() == "ok\n"

        ask()  # the worker is up
        benchmark.pedantic(ask, rounds=30, iterations=1)
        benchmark.extra_info["intra_op_threads"] = threads
    finally:
        w.kill()
        w.wait()


def test_20_cpu_ops_with_a_pool_of_four_threads_per_cpu_under_load(benchmark, load):
    _bench(benchmark, 4 * load)


def test_20_cpu_ops_with_one_intra_op_thread_under_load(benchmark, load):
    _bench(benchmark, 1)
