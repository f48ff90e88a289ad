#!/usr/bin/env python3
"""Issue 25, class 6 on a GPU: a slow or hanging first call must not hold the GPU lane.

    python3 harness/bench/tools/gpu_lane_check.py [--budget 30] [--allowance 5]      # ~6 minutes on an H100

Four cases, each through the local pipeline (two judging threads on cuda:0) or alone, the order
of the device lock's grants fixed by this script (it holds the lock until both judgements wait):

  alone      the honest relu alone: its median, the control for "unchanged timings"
  sleeper    a first call that sleeps on the host (40 s) beside the honest one: the sleeper is
             stopped (the GPU is quiet), the honest one goes; expect yields "stopped"
  hang       a first call that launches a GPU spin of days beside the honest one: stopping is
             not enough (the GPU is not quiet), its workers are killed and started again behind
             the honest one; expect yields "restarted", the hang's verdict timeout sandbox.timeout
  hang-alone the same hang with nobody waiting: it holds the GPU until its budget is spent, then
             the GPU is released: released_after_bound_s must stay under 10 s

Prints one JSON line per judgement, then a table: status/rule of each, the honest judgement's
wait for the GPU after the script released it (must be < 10 s; about the allowance), its median
against the control's, and how the slow one gave the GPU up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from harness.executors.local import LocalExecutor  # noqa: E402
from sandbox.evaluate import EvalConfig, evaluate  # noqa: E402
from sandbox.intake.task import load_task  # noqa: E402
from sandbox.lane import devicelock  # noqa: E402
from sandbox.verdict import Mode  # noqa: E402

RELU = load_task(REPO / "tests/adversarial/tasks/relu.py")
HONEST = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''
SLEEPER = '''
import time
import torch
import torch.nn as nn

_first = True


class ModelNew(nn.Module):
    def forward(self, x):
        global _first
        if _first:
            _first = False
            time.sleep(40)  # on the host: the GPU is idle meanwhile
        return torch.relu(x)
'''
HANG = '''
import torch
import torch.nn as nn

_first = True


class ModelNew(nn.Module):
    def forward(self, x):
        global _first
        if _first:
            _first = False
            torch.cuda._sleep(1 << 52)  # a spin kernel of days
            torch.cuda.synchronize()
        return torch.relu(x)
'''


class RecordingLock(devicelock.DeviceLock):
    def __init__(self, device: str) -> None:
        super().__init__(device)
        self.log: list[tuple[str, str, float]] = []

    def acquire(self, rank: int = devicelock.JUDGING, ticket: int | None = None) -> bool:
        self.log.append((threading.current_thread().name, "want", time.monotonic()))
        got = super().acquire(rank, ticket)
        self.log.append((threading.current_thread().name, "got", time.monotonic()))
        return got

    def release(self) -> None:
        self.log.append((threading.current_thread().name, "free", time.monotonic()))
        super().release()

    def times(self, who: str, what: str) -> list[float]:
        return [t for n, w, t in self.log if n == who and w == what]


def cfg(budget: float, **kw) -> EvalConfig:
    base = dict(device="cuda", mode=Mode.FEEDBACK, profile="default", seed=7, timeout_s=600.0, max_timing_s=2.0,
                feedback_timing_s=2.0, baselines=("eager",), allow_torch_ops=True, first_call_timeout_s=budget)
    base.update(kw)
    return EvalConfig(**base)


def pair(slow_src: str, budget: float) -> dict:
    lock = RecordingLock("cuda:0")
    devicelock._LOCKS[devicelock.key("cuda")] = lock
    try:
        with LocalExecutor(compile_workers=0, timing_devices=["cuda:0"], judges_per_device=2,
                           compile_cuts=False) as ex:
            lock.acquire()
            try:
                slow = ex.submit(RELU, slow_src, cfg(budget))
                while lock.waiting() < 1:
                    time.sleep(0.05)
                slow_t = next(n for n, w, _ in lock.log if w == "want" and n != "MainThread")
                honest = ex.submit(RELU, HONEST, cfg(budget))
                while lock.waiting() < 2:
                    time.sleep(0.05)
                honest_t = next(n for n, w, _ in lock.log if w == "want" and n not in ("MainThread", slow_t))
            finally:
                t_free = time.monotonic()
                lock.release()
            h, s = honest.result(), slow.result()
    finally:
        devicelock._LOCKS.pop(devicelock.key("cuda"), None)
    return {"honest": h, "slow": s, "honest_wait_s": round(lock.times(honest_t, "got")[0] - t_free, 2),
            "slow_first_got_before_honest": lock.times(slow_t, "got")[0] < lock.times(honest_t, "got")[0]}


def row(v) -> dict:
    return {"status": v.status.value, "rule": v.rule, "message": v.message[:160],
            "median_us": round(v.timings["candidate"].median_us, 2) if "candidate" in v.timings else None,
            "held_s": v.durations_s.get("exclusive"), "first_calls": v.evidence.get("first_calls")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=30.0, help="first_call_timeout_s (the judgement's first calls)")
    ap.add_argument("--allowance", type=float, default=5.0, help="KH_LANE_ALLOWANCE_S")
    a = ap.parse_args()
    os.environ["KH_LANE_ALLOWANCE_S"] = str(a.allowance)
    out: dict[str, dict] = {}
    t = time.monotonic()
    out["alone"] = {"honest": row(evaluate(RELU, HONEST, cfg(a.budget)))}
    for name, src in (("sleeper", SLEEPER), ("hang", HANG)):
        r = pair(src, a.budget)
        out[name] = {"honest": row(r["honest"]), "slow": row(r["slow"]), "honest_wait_s": r["honest_wait_s"],
                     "slow_first": r["slow_first_got_before_honest"]}
    v = evaluate(RELU, HANG, cfg(a.budget))
    fc = v.evidence.get("first_calls") or {}
    out["hang-alone"] = {"slow": row(v), "released_after_bound_s": round((v.durations_s.get("exclusive") or 0)
                                                                         - fc.get("spent_s", 0.0), 2)}
    for k, r in out.items():
        print(json.dumps({"case": k, **r}, default=str))
    ctrl = out["alone"]["honest"]["median_us"]
    print(f"\n{'case':<11} {'slow verdict':<26} {'yields':<30} {'honest':<8} {'wait s':>7} {'median us':>10} {'ctrl us':>8}")
    for k, r in out.items():
        s = r.get("slow", {})
        ys = ",".join(y.get("how", "?").split(" ")[0] for y in (s.get("first_calls") or {}).get("yields", []))
        h = r.get("honest", {})
        print(f"{k:<11} {(s.get('status', '-') + ' ' + str(s.get('rule') or '')):<26} {ys or '-':<30} "
              f"{h.get('status', '-'):<8} {r.get('honest_wait_s', r.get('released_after_bound_s', '-')):>7} "
              f"{h.get('median_us') or '-':>10} {ctrl:>8}")
    print(f"total {time.monotonic() - t:.0f} s; expect: honest valid everywhere, its wait < 10 s (about the "
          f"allowance), its median near the control's; sleeper valid with 'stopped'; hang timeout "
          f"sandbox.timeout with 'restarted'; hang-alone released_after_bound_s < 10")
    return 0


if __name__ == "__main__":
    sys.exit(main())
