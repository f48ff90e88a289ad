"""A run stopped by SIGINT while a build worker builds: ``python -m tests.support.stop_in_build
--executor serial|local --results DIR``.

One op (relu), one trial, the offline model, on the CPU, in this process (``orchestrate.run`` under
``stop_signals``, as ``harness run`` runs it). A thread waits for the first build worker to register
(sandbox/lane/quiet.py), stops its whole tree (SIGSTOP: a build that never ends, as a compile at
nice 19 on a saturated machine nearly does), then sends SIGINT to this process. Prints one JSON
line: the seconds from the signal to the run's end, what ended it, whether the frozen worker is
still alive at that point, and the run's stored status.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from pathlib import Path

from harness.methods.base import Budget
from harness.runner.orchestrate import RunConfig, run
from harness.runner.stop import stop_signals
from harness.store import Results
from sandbox.lane import quiet
from tests.support.evalconfig import FAST_OVERRIDES


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def freeze_then_interrupt(box: dict) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        handles = quiet.registered()
        if handles:
            box["frozen"] = handles[0].freeze()  # pids of the worker's tree, now stopped
            box["pid"] = handles[0].pid
            box["t"] = time.monotonic()
            os.kill(os.getpid(), signal.SIGINT)
            return
        time.sleep(0.005)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--executor", default="serial")
    ap.add_argument("--results", type=Path, required=True)
    a = ap.parse_args()
    cfg = RunConfig(method="best-of-n", ops=["relu"], budget=Budget(evaluations=1), results=a.results,
                    run_id="r", progress=False, executor=a.executor, compile_workers=1,
                    eval_overrides={**FAST_OVERRIDES, "timeout_s": 240.0})
    box: dict = {}
    threading.Thread(target=freeze_then_interrupt, args=(box,), daemon=True).start()
    ended = "returned"
    try:
        with stop_signals():
            run(cfg)
    except KeyboardInterrupt as e:
        ended = type(e).__name__
    t = time.monotonic()
    print(json.dumps({"ended": ended, "signalled": "t" in box, "stop_s": round(t - box["t"], 2) if "t" in box else None,
                      "frozen_alive": alive(box["pid"]) if "pid" in box else None,
                      "status": Results.open(a.results).get_run("r").status}), flush=True)


if __name__ == "__main__":
    main()
