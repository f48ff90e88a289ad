"""Judgements in flight on one GPU fit its memory (sandbox/lane/slots.py weights, issue 27 goal 1): on
an H200 six judgements of KernelBench level-1 tasks with 8-16 GiB inputs ran beside one another
and two honest ones were judged ``rejected sandbox.resources`` when the harness's own poison step
could not allocate (2026-11-28). Real ``flock`` files, the real local executor, a stand-in judge
(no GPU here: a stand-in that sleeps as a judgement's start-up and hold would) and the GPU's
memory given by ``KH_GPU_MEMORY_MIB``."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import pytest

from harness.executors.local import LocalExecutor
from sandbox.evaluate import EvalConfig
from sandbox.intake.datasize import DataSize, judgement_gpu_bytes
from sandbox.lane import gpumem, slots
from sandbox.verdict import Status, Verdict

GIB = 2**30


@dataclass
class SizedTask:
    """A task as the executor sees it: a name, a source and the data of one call."""

    name: str
    inputs_gib: float
    source: str = field(default="")
    extra_profiles: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.source = f"# {self.name}"

    def data_size(self, profile: str = "default") -> DataSize:
        b = int(self.inputs_gib * GIB)
        return DataSize(profile, inputs=b, outputs=b, weights=0)


def most_at_once(intervals: list[tuple[float, float, int]]) -> int:
    edges = sorted([(a, w) for a, _, w in intervals] + [(b, -w) for _, b, w in intervals])
    n = best = 0
    for _, d in edges:
        n += d
        best = max(best, n)
    return best


def test_a_judgements_weight_is_its_share_of_the_gpus_memory():
    heavy = judgement_gpu_bytes(SizedTask("l1norm", 8.0), EvalConfig(device="cuda:0"))
    # both workers' data (2 x 8 in + 2 x 8 out in the reference, 8 in + 2 x 8 out in the candidate),
    # the device arena (2 x 8 in + 2 x 8 out) and the contexts
    assert heavy == (56 + 32) * GIB + 2**30
    assert slots.weight_for(heavy, 140 * GIB, 6) == 4
    assert slots.weight_for(int(0.1 * GIB), 140 * GIB, 6) == 1
    assert slots.weight_for(500 * GIB, 140 * GIB, 6) == 6  # more than the GPU: alone
    assert slots.weight_for(None, 140 * GIB, 6) == slots.weight_for(heavy, None, 6) == 1  # unknown: one slot
    assert judgement_gpu_bytes(SizedTask("l1norm", 8.0), EvalConfig(device="cpu")) is None


def test_heavy_judgements_never_hold_memory_together_and_start_up_beside_one_another(tmp_path, monkeypatch):
    """Six judging threads on one GPU of 140 GiB: four tasks needing about 89 GiB each (9 of the
    memory's 12 units, which divide 0.9 of it) and eight light ones. The stand-in judge does what the judge does: a start-up
    (both workers' Python, torch, CUDA) holding no reservation, then the reservation
    (sandbox/lane/gpumem.py, taken where the arena is made), the hold, and the end. No two heavy
    judgements ever hold memory together; light ones hold memory beside a heavy one; and heavy
    judgements are in flight together, their start-ups beside one another (session 29 weighed the
    executor's slots instead, which held the memory through the start-ups too: a GPU was busy
    0.30-0.48 of a published-kernel run on two H200s, session 30)."""
    monkeypatch.setenv("KH_DEVICE_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("KH_GPU_MEMORY_MIB", str(140 * 1024))
    log: list[tuple[float, float, float, int]] = []  # (start-up began, reserved at, ended, units)
    lock = threading.Lock()

    def judge(task, source, config):
        t0 = time.monotonic()
        time.sleep(0.3)  # the workers' start-up
        mem = gpumem.GpuMemory()
        mem.reserve(config.device, judgement_gpu_bytes(task, config))
        t1 = time.monotonic()
        time.sleep(0.4 if task.inputs_gib > 1 else 0.2)
        with lock:
            log.append((t0, t1, time.monotonic(), mem.evidence["units"]))
        mem.release()
        return Verdict(status=Status.VALID, task=task.name, message=source)

    ex = LocalExecutor(compile_workers=0, timing_devices=["cuda:0"], compile_cuts=False, judge_fn=judge,
                       judges_per_device=6)
    try:
        tasks = [SizedTask(f"heavy{i}", 8.0) for i in range(4)] + [SizedTask(f"light{i}", 0.01) for i in range(8)]
        futs = [ex.submit(t, t.source, EvalConfig(device="cuda:0")) for t in tasks]
        assert all(f.result(timeout=120).status is Status.VALID for f in futs)
    finally:
        ex.close()
    heavy = [x for x in log if x[3] > 1]
    # 89 GiB of the 0.9 of 140 GiB the 12 units divide (gpumem.USABLE): 9 units
    assert len(heavy) == 4 and {x[3] for x in heavy} == {9} and {x[3] for x in log if x not in heavy} == {1}
    assert most_at_once([(r, e, 1) for _, r, e, _ in heavy]) == 1
    assert most_at_once([(r, e, u) for _, r, e, u in log]) <= gpumem.UNITS
    assert any(r < he and hr < e for _, r, e, u in log if u == 1 for _, hr, he, _ in heavy)
    # heavy judgements are in flight together (start-ups, waits for memory): only their holds are one at a time
    assert most_at_once([(s, e, 1) for s, _, e, _ in heavy]) >= 2


def test_a_heavy_judgement_is_not_starved_by_light_ones_taking_single_slots(tmp_path, monkeypatch):
    """Three light takers keep one or more of three slots busy at every instant, so an
    all-or-nothing take of all three would rarely find them free; after GROW_AFTER_S the heavy
    one becomes the grower and keeps what it gets until it has its weight."""
    monkeypatch.setattr(slots, "GROW_AFTER_S", 0.3)
    monkeypatch.setattr(slots, "POLL_S", 0.02)
    base = str(tmp_path / "gpu-0.slot")
    stop = threading.Event()

    def light(k: int) -> None:
        time.sleep(0.05 * k)  # staggered: never all free at once
        while not stop.is_set():
            got, _ = slots.take(base, lambda: 3, stop.is_set)
            if got is None:
                return
            time.sleep(0.15)
            got.release()

    threads = [threading.Thread(target=light, args=(k,), daemon=True) for k in range(3)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.2)
        t0 = time.monotonic()
        got, waited = slots.take(base, lambda: 3, lambda: time.monotonic() - t0 > 20, weight=3)
        assert got is not None and len(got.held) == 3 and waited >= 0.0, waited
        assert sorted(s.index for s in got.held) == [0, 1, 2]
        assert slots.try_take(base, 3) is None  # all three are its own
        got.release()
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)


@pytest.mark.parametrize("weight", [2, 3])
def test_a_weighted_take_holds_nothing_while_it_waits_unless_it_is_the_grower(tmp_path, monkeypatch, weight: int):
    monkeypatch.setattr(slots, "GROW_AFTER_S", 60.0)  # never the grower here
    monkeypatch.setattr(slots, "POLL_S", 0.02)
    base = str(tmp_path / "gpu-0.slot")
    other = slots.try_take(base, 3)
    assert other is not None and other.index == 0
    seen: list[int] = []
    t0 = time.monotonic()

    def give_up() -> bool:  # while it waits, the two other slots stay free for anyone
        probe = [slots.try_take(base, 3) for _ in range(2)]
        seen.append(sum(p is not None for p in probe))
        for p in probe:
            if p is not None:
                p.release()
        return time.monotonic() - t0 > 0.3

    got, waited = slots.take(base, lambda: 3, give_up, weight=weight)
    other.release()
    if weight == 3:
        assert got is None and waited >= 0.3 and seen and min(seen) == 2
    else:
        assert got is not None and len(got.held) == 2
        got.release()


def test_the_ray_executor_asks_for_the_same_share_of_a_gpu(monkeypatch):
    """Ray judge tasks ask for ``weight / judges_per_gpu`` of a GPU resource (``GpuWeights``): Ray
    then packs no two heavy judgements on one GPU, as the judge's memory reservation does."""
    from types import SimpleNamespace

    from harness.executors.base import GpuWeights
    from harness.executors.ray_executor import RayExecutor

    monkeypatch.setenv("KH_GPU_MEMORY_MIB", str(140 * 1024))
    ex = SimpleNamespace(_weights=GpuWeights(), judges_per_gpu=6)
    assert RayExecutor.gpu_share(ex, SizedTask("l1norm", 8.0), EvalConfig(device="cuda:0")) == pytest.approx(4 / 6)
    assert RayExecutor.gpu_share(ex, SizedTask("relu", 0.01), EvalConfig(device="cuda:0")) == pytest.approx(1 / 6)
    assert RayExecutor.gpu_share(ex, SizedTask("l1norm", 8.0), EvalConfig(device="cpu")) == 0


def test_a_judgement_that_ran_the_gpu_out_of_memory_beside_others_is_judged_again_alone(tmp_path, monkeypatch):
    """A GPU verdict ``rejected sandbox.resources`` by CUDA running out of memory while the GPU was
    shared is judged again with every unit of the GPU's memory reserved (gpumem.alone), and that
    verdict stands, with the first one in its evidence. The stand-in judge runs out of memory only
    beside others, as an honest kernel does when its neighbours' memory fills the GPU; a verdict
    that is not a CUDA out-of-memory one, or that was already alone, is not judged again."""
    monkeypatch.setenv("KH_DEVICE_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("KH_GPU_MEMORY_MIB", str(140 * 1024))
    calls: list[tuple[str, int]] = []

    def judge(task, source, config):
        mem = gpumem.GpuMemory()
        mem.reserve(config.device, judgement_gpu_bytes(task, config))
        units = mem.evidence["units"]
        mem.release()
        calls.append((source, units))
        v = Verdict(status=Status.VALID, task=task.name, message=source)
        v.evidence["gpu_memory"] = dict(mem.evidence)
        if source in ("honest", "greedy") and (units < gpumem.UNITS or source == "greedy"):
            v.status, v.rule, v.message = Status.REJECTED, "sandbox.resources", "the candidate ran out of its memory limit"
            v.logs = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB."
        elif source == "host":
            v.status, v.rule, v.logs = Status.REJECTED, "sandbox.resources", "MemoryError: the host's"
        return v

    with LocalExecutor(compile_workers=0, timing_devices=["cuda:0"], compile_cuts=False, judge_fn=judge,
                       judges_per_device=2) as ex:
        task = SizedTask("heavy", 8.0)
        honest, greedy, host = (ex.submit(task, s, EvalConfig(device="cuda:0")).result(timeout=60)
                                for s in ("honest", "greedy", "host"))
    assert honest.status is Status.VALID and honest.evidence["judged_again_alone"]["first"]["rule"] == \
        "sandbox.resources" and honest.evidence["gpu_memory"]["units"] == gpumem.UNITS
    assert greedy.status is Status.REJECTED and "judged_again_alone" in greedy.evidence  # alone too: it stands
    assert host.status is Status.REJECTED and "judged_again_alone" not in host.evidence  # not the GPU's memory
    assert [c for c in calls if c[0] == "host"] == [("host", 9)]
    assert [u for s, u in calls if s == "honest"] == [9, gpumem.UNITS]
