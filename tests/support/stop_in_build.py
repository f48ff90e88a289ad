"""A run stopped by SIGINT while a build worker builds: ``python -m tests.support.stop_in_build
--executor serial|local|ray --results DIR``.

One op (relu), one trial, the offline model, on the CPU, in this process (``orchestrate.run`` under
``stop_signals``, as ``harness run`` runs it). A thread waits for the first build worker to register
(sandbox/lane/quiet.py; with ``--executor ray``, to appear in a Ray worker), stops it (SIGSTOP: a build that never ends, as a compile at
nice 19 on a saturated machine nearly does), then sends SIGINT to this process. Prints one JSON
line: the seconds from the signal to the run's end, what ended it, whether the frozen worker is
still alive at that point, and the run's stored status. With ``--batch``, ``run_batch`` (as
``harness eval-batch`` runs it) judges one C++ kernel instead.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from pathlib import Path

from harness.batch.driver import BatchOptions, run_batch
from harness.batch.inputs import Pair
from harness.methods.base import Budget
from harness.runner.orchestrate import RunConfig, run
from harness.runner.stop import stop_signals
from harness.store import Results
from sandbox.lane import quiet
from tests.support.cli import REPO
from tests.support.evalconfig import FAST_OVERRIDES


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def build_worker_below() -> int | None:
    """A candidate worker below this process but not its own child's: a Ray worker's build task (the
    local Ray's raylet is this process's child). The first such worker of a Ray run is its build
    worker, since a judge task starts its own only after the build. Only this process's descendants
    are looked at: the other tests' workers on the machine are never touched."""
    me = os.getpid()
    for pid in map(int, filter(str.isdigit, os.listdir("/proc"))):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"sandbox.worker" not in cmd or b"candidate" not in cmd:
            continue
        up, seen = parent_of(pid), 0
        while up > 1 and up != me and seen < 64:
            up, seen = parent_of(up), seen + 1
        if up == me:
            return pid
    return None


def freeze_then_interrupt(box: dict, executor: str) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if executor == "ray":
            pid = build_worker_below()
            if pid is not None:
                os.kill(pid, signal.SIGSTOP)
        else:
            handles = quiet.registered()
            pid = handles[0].pid if handles else None
            if pid is not None:
                handles[0].freeze()  # the worker's whole tree, stopped
        if pid is not None:
            box["pid"], box["t"] = pid, time.monotonic()
            os.kill(os.getpid(), signal.SIGINT)
            return
        time.sleep(0.005)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--executor", default="serial")
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--batch", action="store_true", help="judge one kernel with run_batch instead of a run")
    a = ap.parse_args()
    cfg = RunConfig(method="best-of-n", ops=["relu"], budget=Budget(evaluations=1), results=a.results,
                    run_id="r", progress=False, executor=a.executor, compile_workers=1,
                    eval_overrides={**FAST_OVERRIDES, "timeout_s": 240.0})
    box: dict = {}
    threading.Thread(target=freeze_then_interrupt, args=(box, a.executor), daemon=True).start()
    ended = "returned"
    try:
        with stop_signals():
            if a.batch:  # `harness eval-batch`: one published-style C++ kernel against the relu op
                run_batch([Pair("relu", REPO / "tests/conformance/kernels/cpu_cpp_relu_extra_cflags.py",
                                REPO / "reference_ops/activation/relu.py")],
                          BatchOptions(out=a.results / "batch", executor=a.executor, jobs=1, mode="feedback",
                                       timeout=240.0, max_timing_s=0.3, progress=False))
            else:
                run(cfg)
    except KeyboardInterrupt as e:
        ended = type(e).__name__
    t = time.monotonic()
    status = None if a.batch else Results.open(a.results).get_run("r").status
    print(json.dumps({"ended": ended, "signalled": "t" in box, "stop_s": round(t - box["t"], 2) if "t" in box else None,
                      "frozen_alive": alive(box["pid"]) if "pid" in box else None, "status": status}), flush=True)


if __name__ == "__main__":
    main()
