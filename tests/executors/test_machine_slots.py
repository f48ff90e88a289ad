"""Judgements in flight per GPU counted across the harness processes of one machine
(sandbox/lane/slots.py, issue 27 goal 6): real processes, real ``flock`` files, the real local
executor with a stand-in judge (no GPU: a stand-in that sleeps as a judgement's start-up and hold
would)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sandbox.lane import slots

CHILD = textwrap.dedent("""
    import json, os, sys, time
    from harness.executors.local import LocalExecutor
    from sandbox.evaluate import EvalConfig
    from sandbox.verdict import Status, Verdict

    log, ready, go = sys.argv[1:4]

    class Task:
        name = "op"

    def judge(task, source, config):  # a judgement's start-up and hold, as the executor sees it
        t0 = time.time()
        time.sleep(0.4)
        with open(log, "a") as f:
            f.write(json.dumps([t0, time.time()]) + "\\n")
        return Verdict(status=Status.VALID, task="op", message=source)

    ex = LocalExecutor(compile_workers=0, timing_devices=["cuda:0"], compile_cuts=False, judge_fn=judge,
                       judges_per_device=2)
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.02)
    futs = [ex.submit(Task(), f"c{i}", EvalConfig(device="cuda:0")) for i in range(6)]
    out = [f.result(timeout=60) for f in futs]
    assert all(v.status is Status.VALID for v in out)
    ev = [v.evidence.get("executor", {}) for v in out]
    ex.close()
    print(json.dumps({"summary": ex.stats.summary(), "slot_wait": [e.get("slot_wait_s") for e in ev]}))
""")

HOLDER = textwrap.dedent("""
    import sys, time
    from sandbox.lane import slots
    held = [slots.try_take(sys.argv[1], 2), slots.try_take(sys.argv[1], 2)]
    print(sorted(s.index for s in held), flush=True)
    time.sleep(60)
""")


def most_at_once(intervals: list[list[float]]) -> int:
    edges = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    n = best = 0
    for _, d in edges:
        n += d
        best = max(best, n)
    return best


def test_a_slot_held_by_another_process_is_not_given_again_until_that_process_dies(tmp_path, monkeypatch):
    monkeypatch.setenv("KH_DEVICE_LOCK_DIR", str(tmp_path))
    base = slots.base_for("cuda:0")
    assert base == str(tmp_path / "gpu-0.slot")
    assert slots.base_for("cpu") is None  # CPU judgements are not counted across processes
    monkeypatch.setenv("KH_MACHINE_SLOTS", "0")
    assert slots.base_for("cuda:0") is None  # the count turned off
    monkeypatch.delenv("KH_MACHINE_SLOTS")

    holder = subprocess.Popen([sys.executable, "-c", HOLDER, base], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "[0, 1]"
        assert slots.try_take(base, 2) is None  # both held elsewhere
        third = slots.try_take(base, 3)  # a limit grown by a parked judgement: the next file
        assert third is not None and third.index == 2
        third.release()
        t = time.monotonic()
        got, waited = slots.take(base, lambda: 2, lambda: time.monotonic() - t > 0.5)
        assert got is None and waited >= 0.5  # gave up: nothing was freed
        holder.kill()
        holder.wait()
        got = slots.try_take(base, 2)  # the kernel dropped the dead holder's locks
        assert got is not None and got.index == 0
        got.release()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("counted", [True, False])
def test_two_harness_processes_share_the_judgements_in_flight_per_gpu(tmp_path, counted):
    """Two executors of two judging threads each on one GPU: with the machine-wide count, at most
    two judgements are in flight on it at any time, not four; each waited judgement says so."""
    env = {**os.environ, "KH_DEVICE_LOCK_DIR": str(tmp_path / "locks"), "KH_MACHINE_SLOTS": "1" if counted else "0"}
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / f"log{i}"), str(tmp_path / f"ready{i}"),
                               str(go)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(2)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.05)
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    intervals = [json.loads(line) for i in range(2) for line in Path(tmp_path / f"log{i}").read_text().splitlines()]
    assert len(intervals) == 12
    reports = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    if counted:
        assert most_at_once(intervals) == 2
        assert all(w is not None for r in reports for w in r["slot_wait"])
        assert sum(r["summary"]["slot_wait_s"] for r in reports) > 0.4  # someone waited for a slot
    else:
        assert most_at_once(intervals) >= 3  # each process alone allows two: together they ran more
        assert all(w is None for r in reports for w in r["slot_wait"])
