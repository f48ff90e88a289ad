"""Two judgements in one process never hold a device at the same time (sandbox/lane/devicelock.py):
the second waits after starting its workers, and that wait is recorded, not charged.

The test holds the CPU device itself until both judgements are queued for it, so the order of
events does not depend on how fast this machine starts workers."""

from __future__ import annotations

import threading
import time

import pytest

from sandbox.lane import devicelock
from sandbox.verdict import Status
from tests.evaluator.conftest import python_candidate, run


class RecordingLock:
    """The device lock, with the time each thread asked for it, got it and gave it back."""

    def __init__(self) -> None:
        self.inner = devicelock.DeviceLock()
        self.log: list[tuple[str, str, float]] = []

    def acquire(self, *a, **k) -> bool:
        self.log.append((threading.current_thread().name, "want", time.monotonic()))
        got = self.inner.acquire(*a, **k)
        self.log.append((threading.current_thread().name, "got", time.monotonic()))
        return got

    def release(self) -> None:
        self.log.append((threading.current_thread().name, "free", time.monotonic()))
        self.inner.release()

    def when(self, who: str, what: str) -> float:
        return next(t for n, w, t in self.log if n == who and w == what)


def test_concurrent_judgements_take_the_device_one_at_a_time(monkeypatch):
    lock = RecordingLock()
    monkeypatch.setitem(devicelock._LOCKS, devicelock.key("cpu"), lock)
    src = python_candidate("        return a + b")
    out: dict[str, object] = {}

    def one():
        out[threading.current_thread().name] = run(src, allow_torch_ops=True, max_timing_s=1.0,
                                                   feedback_timing_s=1.0)

    names = ["judge-a", "judge-b"]
    threads = [threading.Thread(target=one, name=n) for n in names]
    lock.inner.acquire()  # the device is busy until both judgements wait for it
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 300
        while {n for n, w, _ in lock.log if w == "want"} != set(names):
            assert time.monotonic() < deadline, "the judgements never asked for the device"
            assert all(t.is_alive() for t in threads), "a judgement ended without asking for the device"
            time.sleep(0.02)
    finally:
        lock.inner.release()
    for t in threads:
        t.join()

    assert [out[n].status for n in names] == [Status.VALID, Status.VALID], \
        [(out[n].status, out[n].message) for n in names]
    first, second = sorted(names, key=lambda n: lock.when(n, "got"))
    # exclusive: the second got the device only after the first gave it back
    assert lock.when(second, "got") >= lock.when(first, "free")
    for n in names:
        v = out[n]
        # the verdict records the real wait and the real hold (to rounding and a little slack)
        assert abs(v.durations_s["queue"] - (lock.when(n, "got") - lock.when(n, "want"))) < 0.1
        assert abs(v.durations_s["exclusive"] - (lock.when(n, "free") - lock.when(n, "got"))) < 0.1
    # the second waited for the whole of the first one's hold, and that wait is on its record
    assert out[second].durations_s["queue"] >= out[first].durations_s["exclusive"] - 0.1
    for n in names:  # where the hold went on the CPU side (sandbox/lane/holdcpu.py)
        hc, held = out[n].evidence["hold_cpu"], out[n].durations_s["exclusive"]
        assert abs(hc["wall_s"] - held) < 0.5, (hc, held)
        assert all(hc[r]["cpu_s"] > 0 for r in ("judging_thread", "reference", "candidate")), hc
        assert hc["judging_thread"]["cpu_s"] + hc["judging_thread"]["runq_s"] <= hc["wall_s"] + 0.05, hc


def _contend(entries: list[tuple[str, int, int]]) -> list[str]:
    """Threads that ask a held lock for the device with (name, rank, ticket), in this order;
    the order in which they get it once it is released."""
    lock = devicelock.DeviceLock()
    lock.acquire()
    got: list[str] = []

    def one(name: str, rank: int, ticket: int) -> None:
        lock.acquire(rank, ticket)
        got.append(name)
        time.sleep(0.01)
        lock.release()

    threads = []
    for name, rank, ticket in entries:
        th = threading.Thread(target=one, args=(name, rank, ticket))
        th.start()
        threads.append(th)
        deadline = time.monotonic() + 10
        while len(lock._waiting) < len(threads):  # each is in line before the next asks
            assert time.monotonic() < deadline
            time.sleep(0.001)
    lock.release()
    for th in threads:
        th.join(10)
    return got


def test_a_judging_pair_gets_the_device_before_warm_apart_workers_that_asked_earlier():
    """Six judging threads per GPU: warm-apart workers of newer units must not hold the GPU in turn
    while an older unit's judging pair is ready (the first verdict of a batch waited behind them)."""
    w, j = devicelock.WARM_APART, devicelock.JUDGING
    order = _contend([("warm-5", w, 5), ("warm-3", w, 3), ("judge-4", j, 4), ("warm-1", w, 1), ("judge-2", j, 2)])
    assert order == ["judge-2", "judge-4", "warm-1", "warm-3", "warm-5"]


def test_a_waiter_that_is_interrupted_leaves_the_line():
    """A wait cut short by an exception must not leave its place at the head of the line: the
    device would then never be granted to anyone else."""
    lock = devicelock.DeviceLock()
    lock.acquire()
    real_wait = lock._cv.wait

    def wait(*a, **k):
        if threading.current_thread().name == "victim":
            raise KeyboardInterrupt
        return real_wait(*a, **k)

    lock._cv.wait = wait
    caught: list[BaseException] = []

    def victim() -> None:
        try:
            lock.acquire(devicelock.JUDGING, 0)  # would be first in line
        except KeyboardInterrupt as e:
            caught.append(e)

    th = threading.Thread(target=victim, name="victim")
    th.start()
    th.join(10)
    assert caught and not lock._waiting
    got = threading.Event()

    def later() -> None:
        lock.acquire(devicelock.WARM_APART, 9)
        got.set()
        lock.release()

    threading.Thread(target=later).start()
    lock.release()
    assert got.wait(10)
    with pytest.raises(RuntimeError):
        lock.release()  # not held
    with lock:  # the context manager form (sandbox/check/attribution.py)
        assert lock.locked()
    assert not lock.locked()


_HOLD = """
import os, sys, time
sys.path.insert(0, {repo!r})
from sandbox.lane import devicelock
lock = devicelock.device_lock("cuda:1")
lock.acquire()
t0 = time.time()
time.sleep(0.6)
t1 = time.time()
lock.release()
print(t0, t1)
"""


def test_a_gpu_is_held_by_one_process_of_the_machine_at_a_time(tmp_path, monkeypatch):
    """Two harness processes (or Ray's judge tasks sharing a GPU) judging on the same GPU: their
    holds never overlap. No GPU is touched: the lock is a file named after the GPU."""
    import subprocess
    import sys
    from pathlib import Path

    env = {**__import__("os").environ, "KH_DEVICE_LOCK_DIR": str(tmp_path), "CUDA_VISIBLE_DEVICES": "3,GPU-x/y"}
    code = _HOLD.format(repo=str(Path(__file__).resolve().parents[2]))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    spans = sorted(tuple(map(float, p.communicate(timeout=60)[0].split())) for p in procs)
    assert all(p.returncode == 0 for p in procs)
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end, spans  # one after the other
    assert [p.name for p in tmp_path.iterdir()] == ["gpu-GPU-x_y.lock"]  # cuda:1 is the second visible GPU
    monkeypatch.setenv("KH_DEVICE_LOCK_DIR", str(tmp_path))
    assert devicelock.file_for("cpu") is None  # CPU judgements: this process only


def test_a_gpu_lock_is_named_when_taken_not_when_made(tmp_path, monkeypatch):
    """A Ray worker process runs tasks on different GPUs in turn: the same in-process lock must
    take the file of the GPU this task was given."""
    monkeypatch.setenv("KH_DEVICE_LOCK_DIR", str(tmp_path))
    lock = devicelock.DeviceLock("cuda:0")
    for gpu in ("0", "1"):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", gpu)
        with lock:
            assert (tmp_path / f"gpu-{gpu}.lock").exists()
