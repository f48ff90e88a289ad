"""``evidence.hold_cpu`` (sandbox/lane/holdcpu.py): the CPU time and run-queue wait of the judging
thread and of each worker's process tree over a judgement's device hold, from the kernel's
schedstat. Three processes pinned to one CPU: the measured one waited for it about two thirds of
the time, and the numbers say so."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from sandbox.lane import holdcpu

SPIN = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 30: pass\n"


@pytest.mark.skipif(not holdcpu.available(), reason="the kernel has no per-thread schedstat")
def test_a_worker_that_shares_its_cpu_is_seen_waiting_for_it():
    cpu = sorted(os.sched_getaffinity(0))[0]
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(3)]
    try:
        for p in procs:
            os.sched_setaffinity(p.pid, {cpu})
        time.sleep(0.3)
        h = holdcpu.HoldCpu({"candidate": procs[0].pid})
        time.sleep(1.5)
        got = h.finish()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    c = got["candidate"]
    assert 1.4 <= got["wall_s"] < 3.0
    assert 0.1 < c["cpu_s"] < 1.0 and c["runq_s"] > 0.5, got  # about a third on the CPU, the rest waiting
    assert c["cpu_s"] + c["runq_s"] <= got["wall_s"] + 0.1, got  # one thread: never more than the wall
    t = got["judging_thread"]  # this thread slept: neither ran nor waited
    assert t["cpu_s"] < 0.1 and t["runq_s"] < 0.2, got


def test_a_tree_that_cannot_be_read_gives_no_numbers_and_no_error():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    h = holdcpu.start({"reference": gone.pid})
    got = holdcpu.finish(h) if h is not None else None
    assert got is None or got["reference"] == {"cpu_s": 0.0, "runq_s": 0.0, "procs": 0, "threads": 0, "top": {}, "runq_top": {}}


PARENT = ("import subprocess, sys, time\n"
          "sys.stdin.readline()\n"  # the hold has started: fork the busy child now
          "subprocess.Popen(['bash', '-c', 'while :; do :; done'])\n"
          "time.sleep(30)\n")


@pytest.mark.skipif(not holdcpu.available(), reason="the kernel has no per-thread schedstat")
def test_a_process_started_under_a_worker_during_the_hold_is_counted_and_named():
    """What a worker's tree starts while the GPU is held (inductor's compile pool was one: session
    23) shows as more processes and as a "child <name>" among the tree's busiest names."""
    w = subprocess.Popen([sys.executable, "-c", PARENT], stdin=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        h = holdcpu.HoldCpu({"reference": w.pid})
        w.stdin.write("go\n")
        w.stdin.flush()
        time.sleep(1.5)
        got = h.finish()["reference"]
    finally:
        for p in holdcpu.tree(w.pid)[1:]:
            os.kill(p, 9)
        w.kill()
        w.wait()
    assert got["procs"] == 2, got
    assert got["top"].get("child bash", 0) > 0.3, got  # spinning for most of 1.5 s
    assert next(iter(got["top"])) == "child bash", got  # the busiest name comes first
    assert got["cpu_s"] >= got["top"]["child bash"], got
