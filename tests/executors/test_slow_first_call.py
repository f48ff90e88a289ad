"""Issue 25, class 6: a slow first call must not hold the device lane (sandbox/lane/firstcall.py).

A judgement's warm-up gives the device up, its candidate stopped, once it has held it for the
lane allowance while another judgement waits; its first calls share one budget across profiles
and orders; a parked judgement holds no lane of the local executor. The end-to-end cases use the
local pipeline on CPU and read the device lock's own record (who asked, got and gave it back,
and when), not the wall clock of this loaded box.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from harness.executors.local import LocalExecutor
from sandbox import rules
from sandbox.contract import EvalConfig, Status, Task, Verdict, load_task  # noqa: F401 (Task: JudgeFn's type)
from sandbox.lane import devicelock, firstcall
from sandbox.verdict import Mode

RELU = load_task(Path(__file__).resolve().parents[1] / "adversarial" / "tasks" / "relu.py")
ALLOWANCE_S = 1.5


class RecordingLock(devicelock.DeviceLock):
    """The CPU's device lock, with who asked for it, got it and gave it back, and when."""

    def __init__(self) -> None:
        super().__init__("cpu")
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


# -- the lock and the lanes, without workers ----------------------------------------------------

def test_a_yielding_holder_lets_the_waiters_go_and_gets_the_device_back_after_them():
    lock = devicelock.DeviceLock("cpu")
    lock.acquire()
    order: list[str] = []

    def waiter(name: str) -> None:
        lock.acquire(devicelock.JUDGING)
        order.append(name)
        time.sleep(0.1)
        lock.release()

    threads = [threading.Thread(target=waiter, args=(n,)) for n in ("a", "b")]
    for th in threads:
        th.start()
        while lock.waiting() < threads.index(th) + 1:
            time.sleep(0.001)
    seen_parked: list[int] = []
    threading.Timer(0.05, lambda: seen_parked.append(devicelock.parked("cpu"))).start()
    parked_s = lock.yield_to_waiters()
    order.append("yielder")
    lock.release()
    for th in threads:
        th.join(10)
    assert order == ["a", "b", "yielder"] and parked_s > 0
    assert seen_parked == [1] and devicelock.parked("cpu") == 0


def test_a_parked_judgement_holds_no_lane_of_the_local_executor():
    """One judging thread per device: a second unit is judged while the first is parked (it gave
    its device up during a slow first call), not after it."""
    release = threading.Event()
    finished: list[str] = []

    def judge(task: Task, source: str, config: EvalConfig) -> Verdict:
        if source == "slow":
            devicelock._park("cpu", +1)  # what DeviceLock.yield_to_waiters does while it waits
            try:
                assert release.wait(30)
            finally:
                devicelock._park("cpu", -1)
        finished.append(source)
        return Verdict(status=Status.VALID, mode=Mode.FEEDBACK, device="cpu", task=task.name,
                       candidate_sha256="0" * 64)

    with LocalExecutor(compile_workers=0, timing_devices=["cpu"], judges_per_device=1, judge_fn=judge,
                       compile_cuts=False) as ex:
        slow = ex.submit(RELU, "slow", EvalConfig())
        fast = ex.submit(RELU, "fast", EvalConfig())
        fast.result(timeout=30)
        assert finished == ["fast"] and not slow.done()
        release.set()
        slow.result(timeout=30)
    assert finished == ["fast", "slow"]


# -- end to end: the local pipeline on CPU -------------------------------------------------------

SLOW_FIRST_CALL = '''
import time
import torch
import torch.nn as nn

_first = True


class ModelNew(nn.Module):
    def forward(self, x):
        global _first
        if _first:
            _first = False
            time.sleep(__SLEEP__)  # a first call that takes its time (JIT, autotune, or a hang)
        return torch.relu(x)
'''
HONEST = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


def _cfg(**kw) -> EvalConfig:
    base = dict(device="cpu", mode=Mode.FEEDBACK, profile="small", seed=7, timeout_s=600.0, max_timing_s=0.3,
                feedback_timing_s=0.3, target_ci=0.05, baselines=("eager",), allow_torch_ops=True)
    base.update(kw)
    return EvalConfig(**base)


@pytest.mark.parametrize("sleep_s, budget_s, restart", [(6.0, 30.0, False), (3600.0, 8.0, False), (3600.0, 8.0, True)],
                         ids=["slow", "hang", "hang-restarted"])
def test_a_slow_first_call_gives_the_device_to_the_judgement_beside_it(sleep_s, budget_s, restart, monkeypatch):
    """``hang-restarted`` takes the GPU's path on CPU (as if a kernel of the stopped candidate still
    ran): the slow judgement's workers are killed and started again behind the honest one."""
    monkeypatch.setenv("KH_LANE_ALLOWANCE_S", str(ALLOWANCE_S))
    if restart:
        monkeypatch.setattr(firstcall, "_must_restart", lambda j: True)
    lock = RecordingLock()
    monkeypatch.setitem(devicelock._LOCKS, devicelock.key("cpu"), lock)
    slow_src = SLOW_FIRST_CALL.replace("__SLEEP__", repr(sleep_s))
    with LocalExecutor(compile_workers=0, timing_devices=["cpu"], judges_per_device=2, compile_cuts=False) as ex:
        lock.acquire()  # the device is busy until both judgements wait: the order is the test's, not the box's
        try:
            slow = ex.submit(RELU, slow_src, _cfg(first_call_timeout_s=budget_s))
            deadline = time.monotonic() + 300
            while lock.waiting() < 1:
                assert time.monotonic() < deadline and not slow.done(), "the slow judgement never asked for the device"
                time.sleep(0.05)
            slow_thread = next(n for n, w, _ in lock.log if w == "want" and n != "MainThread")
            honest = ex.submit(RELU, HONEST, _cfg())
            while lock.waiting() < 2:
                assert time.monotonic() < deadline and not honest.done(), "the honest judgement never asked"
                time.sleep(0.05)
            honest_thread = next(n for n, w, _ in lock.log if w == "want" and n not in ("MainThread", slow_thread))
        finally:
            t_free = time.monotonic()
            lock.release()
        h, s = honest.result(timeout=600), slow.result(timeout=600)

    assert h.status is Status.VALID, (h.status, h.rule, h.message)
    # the slow one got the device first (it asked first) and gave it up during its first call ...
    slow_got, honest_got = lock.times(slow_thread, "got"), lock.times(honest_thread, "got")
    assert slow_got[0] < honest_got[0], lock.log
    assert lock.times(slow_thread, "free")[0] < honest_got[0] <= lock.times(honest_thread, "free")[0]
    # ... so the honest verdict waited for it at most the allowance and the stop, far under 10 s
    delay = honest_got[0] - t_free
    assert delay < min(10.0, ALLOWANCE_S + 3.0), (delay, lock.log)
    fc = s.evidence["first_calls"]
    assert fc["yields"] and fc["yields"][0]["how"].startswith("restarted" if restart else "stopped"), fc
    assert ALLOWANCE_S <= fc["yields"][0]["held_s"] < ALLOWANCE_S + 3.0, fc
    if sleep_s < budget_s:  # the slow one's own verdict: valid, its parked time not spent
        assert s.status is Status.VALID, (s.status, s.rule, s.message)
        assert fc["spent_s"] < sleep_s + 1.0 and fc["yields"][0]["parked_s"] > 0, fc
    else:  # a hang: its own budget runs out, and it is its own timeout
        assert (s.status, s.rule) == (Status.TIMEOUT, rules.TIMEOUT), (s.status, s.rule, s.message)
        assert f"{budget_s:g} s for its first calls" in s.message, s.message
        assert lock.times(honest_thread, "free")[0] < lock.times(slow_thread, "free")[-1]
        if restart:  # it started again behind the honest one, the device asked for anew
            assert fc["restarts"] == 1 and len(lock.times(slow_thread, "got")) == 2, (fc, lock.log)


SLOW_EVERYWHERE = '''
import time
import torch
import torch.nn as nn

_shapes = set()
_inits = 0


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        global _inits
        _inits += 1
        if __SLOW_INIT__ and _inits > 3:  # quick in the warm-up (final mode: three profiles), slow once judged
            time.sleep(60)

    def forward(self, x):
        if __SLOW_CALLS__ and tuple(x.shape) not in _shapes:  # the first call at each profile
            _shapes.add(tuple(x.shape))
            time.sleep(4)
        return torch.relu(x)
'''


@pytest.mark.parametrize("case", ["first calls at three profiles", "a constructor slow once judged"])
def test_the_warm_up_has_one_budget(case):
    """Final mode on CPU judges the small profile and two hidden ones: three first calls of 4 s
    spend a 9 s budget (``timeout``); a constructor that is quick in the warm-up is bounded by
    that when it is judged (``timeout`` in well under its 60 s sleep). Its fourth construction is
    the first judged one: the warm-up built at the three profiles, and the judged setup at the
    first profile builds again, the last warm-up having been at a hidden one."""
    from sandbox.evaluate import evaluate

    slow_calls = case.startswith("first")
    src = (SLOW_EVERYWHERE.replace("__SLOW_INIT__", str(not slow_calls))
           .replace("__SLOW_CALLS__", str(slow_calls)))
    cfg = _cfg(mode=Mode.FINAL, seed=None, first_call_timeout_s=9.0) if slow_calls else _cfg(mode=Mode.FINAL, seed=None)
    v = evaluate(RELU, src, cfg)
    assert (v.status, v.rule) == (Status.TIMEOUT, rules.TIMEOUT), (v.status, v.rule, v.message)
    if slow_calls:
        assert "9 s for its first calls" in v.message, v.message
        assert v.evidence["first_calls"]["spent_s"] >= 8.0, v.evidence["first_calls"]
    else:
        assert "setup request" in v.message and "past its bound" in v.message, v.message  # not its 60 s
