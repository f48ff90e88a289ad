"""Issue 25, class 6 on CUDA: a first call whose kernel spins for days, beside an honest judgement.
Stopping the candidate's processes leaves its kernel running, so its judgement's reference worker
finds the GPU busy and the candidate's workers are killed and started again behind the honest
one (sandbox/lane/firstcall.py); the honest verdict waits about the allowance; the spin's own verdict
is a timeout once its budget is spent, and the GPU is free within 10 s of that bound.
harness/bench/tools/gpu_lane_check.py runs the same with a host-side sleeper and prints a table."""

from __future__ import annotations

import time

import pytest
import torch

from harness.executors.local import LocalExecutor
from sandbox import rules
from sandbox.contract import EvalConfig, Status
from sandbox.evaluate import evaluate
from sandbox.lane import devicelock
from sandbox.verdict import Mode
from tests.executors.test_slow_first_call import HONEST, RELU, RecordingLock

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

ALLOWANCE_S, BUDGET_S = 5.0, 30.0
SPIN = '''
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


def _cfg() -> EvalConfig:
    return EvalConfig(device="cuda", mode=Mode.FEEDBACK, profile="default", seed=7, timeout_s=600.0,
                      max_timing_s=1.0, feedback_timing_s=1.0, baselines=("eager",), allow_torch_ops=True,
                      first_call_timeout_s=BUDGET_S)


def test_a_spinning_first_call_kernel_is_killed_for_the_judgement_beside_it(monkeypatch, tmp_path):
    monkeypatch.setenv("KH_LANE_ALLOWANCE_S", str(ALLOWANCE_S))
    # the lane of THIS process is measured: its GPU lock file is its own, so judgements of other
    # processes on the machine (harness/bench/tools/gpu_integrity.sh runs GPU tests beside this one) do not
    # add their turns to the wait (H200, 2026-11-26: 19.5 s with the shared file, the other
    # shards' judgements holding the GPU in between). Their kernels still share the GPU, so the
    # quiet probe reads "busy" and the spin is restarted rather than parked, as asserted below.
    monkeypatch.setenv("KH_DEVICE_LOCK_DIR", str(tmp_path / "locks"))
    lock = RecordingLock()
    lock._device = devicelock.key("cuda")  # the GPU's lock: its machine-wide file too
    monkeypatch.setitem(devicelock._LOCKS, devicelock.key("cuda"), lock)
    with LocalExecutor(compile_workers=0, timing_devices=["cuda:0"], judges_per_device=2, compile_cuts=False) as ex:
        lock.acquire()
        try:
            spin = ex.submit(RELU, SPIN, _cfg())
            while lock.waiting() < 1:
                time.sleep(0.05)
            spin_t = next(n for n, w, _ in lock.log if w == "want" and n != "MainThread")
            honest = ex.submit(RELU, HONEST, _cfg())
            while lock.waiting() < 2:
                time.sleep(0.05)
            honest_t = next(n for n, w, _ in lock.log if w == "want" and n not in ("MainThread", spin_t))
        finally:
            t_free = time.monotonic()
            lock.release()
        h, s = honest.result(timeout=900), spin.result(timeout=900)
    assert h.status is Status.VALID, (h.status, h.rule, h.message)
    waited = lock.times(honest_t, "got")[0] - t_free
    assert waited < 10.0, (waited, lock.log, s.evidence.get("first_calls"), s.durations_s)
    assert (s.status, s.rule) == (Status.TIMEOUT, rules.TIMEOUT), (s.status, s.rule, s.message)
    ys = s.evidence["first_calls"]["yields"]
    assert ys and ys[0]["how"].startswith("restarted"), ys


def test_a_spinning_first_call_releases_the_gpu_within_10_s_of_its_bound():
    v = evaluate(RELU, SPIN, _cfg())
    assert (v.status, v.rule) == (Status.TIMEOUT, rules.TIMEOUT), (v.status, v.rule, v.message)
    fc = v.evidence["first_calls"]
    assert v.durations_s["exclusive"] - fc["spent_s"] < 10.0, (v.durations_s, fc)
