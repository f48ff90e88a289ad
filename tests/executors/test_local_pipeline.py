"""The local pipeline's scheduling rules, with real threads and stand-in build/judge functions
(fast); tests/executors/test_real_builds.py runs the real sandboxed builder and judge."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from harness.executors import make_executor
from harness.executors.local import LANE_POLL_S, LocalExecutor
from sandbox.build.prebuild import BuildResult
from sandbox.evaluate import CandidateError, EvalConfig
from sandbox.lane.devicelock import device_lock
from sandbox.verdict import Status, Verdict


@pytest.fixture(autouse=True)
def own_device_locks(tmp_path, monkeypatch):
    """The executors here time on "cuda:0" (stand-in judges): their machine-wide judgement slots and
    device locks (sandbox/lane/slots.py, devicelock.py) go in a folder of this test's own. In the
    machine's shared folder, another process's judgements on "cuda:0" (the other pytest-xdist
    worker's) held slots, and a unit this test expected in its judgement was still waiting for one
    when the executor closed (CI at 9a3dcf1 and the emulation at e2b0791)."""
    monkeypatch.setenv("KH_DEVICE_LOCK_DIR", str(tmp_path / "device-locks"))


class Task:
    def __init__(self, name: str) -> None:
        self.name = name


def verdict(task, source, status=Status.VALID):
    return Verdict(status=status, task=task.name, message=source)


class Recorder:
    """Stand-in builder and judge that record concurrency and order."""

    def __init__(self, build_s=0.0, judge_s=0.0, build_delay=None, start_s=0.0):
        self.lock = threading.Lock()
        self.building = self.judging = 0
        self.max_building = self.max_judging = 0
        self.starts: list[tuple[float, float]] = []  # each judgement's start-up, outside the lock
        self.held: list[tuple[float, float]] = []  # each judgement's time holding the device
        self.start_s = start_s
        self.judged: list[str] = []
        self.build_s, self.judge_s = build_s, judge_s
        self.build_delay = build_delay or {}

    @property
    def overlap(self) -> int:
        """Start-ups that ran (for at least a third of their length) while another held the device."""
        n = 0
        for i, (a, b) in enumerate(self.starts):
            n += any(j != i and min(b, d) - max(a, c) > (b - a) / 3 for j, (c, d) in enumerate(self.held))
        return n

    def build(self, task, source, config):
        with self.lock:
            self.building += 1
            self.max_building = max(self.max_building, self.building)
        time.sleep(self.build_delay.get(source, self.build_s))
        with self.lock:
            self.building -= 1
        if source.startswith("bad"):
            return BuildResult("compile_error", compile_s=0.1, builds=1,
                               verdict=verdict(task, source, Status.COMPILE_ERROR))
        return BuildResult("built", compile_s=self.build_s, builds=1)

    def judge(self, task, source, config):
        """Like sandbox/judge.py: start the workers, then hold the device lock until done."""
        s0 = time.monotonic()
        time.sleep(self.start_s)
        s1 = time.monotonic()
        with device_lock(config.device):
            h0 = time.monotonic()
            with self.lock:
                self.judging += 1
                self.max_judging = max(self.max_judging, self.judging)
            time.sleep(self.judge_s)
            with self.lock:
                self.judging -= 1
                self.judged.append(source)
                self.starts.append((s0, s1))
                self.held.append((h0, time.monotonic()))
        if source.startswith("unusable"):
            raise CandidateError(f"{source}: no ModelNew")
        return verdict(task, source)


def executor(rec, workers=4, devices=("cuda:0",)):
    return LocalExecutor(compile_workers=workers, timing_devices=list(devices), compile_cuts=False,
                         judge_fn=rec.judge, build_fn=rec.build)


def test_builds_run_in_parallel_but_one_judgement_per_timing_worker():
    rec = Recorder(build_s=0.2, judge_s=0.02)
    with executor(rec, workers=4) as ex:
        futs = [ex.submit(Task("op"), f"c{i}", EvalConfig()) for i in range(8)]
        out = [f.result(timeout=30) for f in futs]
    assert [v.message for v in out] == [f"c{i}" for i in range(8)]
    assert rec.max_building >= 3
    assert rec.max_judging == 1


def test_two_gpus_get_two_timing_workers():
    rec = Recorder(build_s=0.0, judge_s=0.2)
    with executor(rec, workers=2, devices=("cuda:0", "cuda:1")) as ex:
        futs = [ex.submit(Task("op"), f"c{i}", EvalConfig(device="cuda")) for i in range(6)]
        [f.result(timeout=30) for f in futs]
    assert rec.max_judging == 2


def test_timing_worker_takes_the_earliest_submitted_ready_unit():
    # c0's build is slow: the timer judges c1, c2 while c0 builds, then c0 (no head-of-line block)
    rec = Recorder(build_delay={"c0": 0.6, "c1": 0.0, "c2": 0.05})
    with executor(rec, workers=3) as ex:
        futs = [ex.submit(Task("op"), f"c{i}", EvalConfig()) for i in range(3)]
        [f.result(timeout=30) for f in futs]
    assert rec.judged == ["c1", "c2", "c0"]


def test_a_compile_error_in_the_build_worker_takes_no_timing_slot():
    rec = Recorder()
    with executor(rec) as ex:
        bad = ex.submit(Task("op"), "bad kernel", EvalConfig()).result(timeout=30)
        good = ex.submit(Task("op"), "good kernel", EvalConfig()).result(timeout=30)
        summary = ex.summary()
    assert bad.status is Status.COMPILE_ERROR and good.status is Status.VALID
    assert rec.judged == ["good kernel"]
    assert summary["compile_errors"] == 1 and summary["judged"] == 1


def test_a_held_executor_builds_but_judges_nothing_until_judging_opens():
    """eval-batch's task check runs while the candidates build (harness/batch/driver.py): held,
    the builds run and a compile error resolves, but no unit is judged before ``open_judging``;
    closed while held (a refusal), every unit fails and none was judged."""
    rec = Recorder(build_s=0.05)
    sources = ["c0", "bad kernel", "c1", "c2"]
    with LocalExecutor(compile_workers=2, timing_devices=["cuda:0"], compile_cuts=False, judge_fn=rec.judge,
                       build_fn=rec.build, hold_judging=True) as ex:
        futs = [ex.submit(Task("op"), s, EvalConfig()) for s in sources]
        assert futs[1].result(timeout=30).status is Status.COMPILE_ERROR  # needs no judging
        deadline = time.monotonic() + 20
        while (ex.stats.built < 3 or rec.building) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(LANE_POLL_S + 0.2)  # every timing thread has looked again at least once
        assert ex.stats.built == 3 and rec.judged == [] and not any(f.done() for f in futs[::2])
        ex.open_judging()
        assert [f.result(timeout=30).message for f in futs] == sources
    assert sorted(rec.judged) == ["c0", "c1", "c2"]
    rec = Recorder()
    ex = LocalExecutor(compile_workers=1, timing_devices=["cuda:0"], compile_cuts=False, judge_fn=rec.judge,
                       build_fn=rec.build, hold_judging=True)
    futs = [ex.submit(Task("op"), f"c{i}", EvalConfig()) for i in range(2)]
    ex.abandon()
    ex.close()
    assert all("closed before judging" in str(f.exception(timeout=10)) for f in futs) and rec.judged == []


def test_a_held_executor_judges_a_task_once_its_gate_opens_and_holds_the_others():
    """eval-batch opens each task as its check passes: a held unit is judged (from the ready queue,
    or taken unbuilt by an idle GPU) only once its task's gate is open."""
    rec = Recorder(build_s=0.3)
    with LocalExecutor(compile_workers=1, timing_devices=["cuda:0"], compile_cuts=False, judge_fn=rec.judge,
                       build_fn=rec.build, hold_judging=True, take_unbuilt=True) as ex:
        b = [ex.submit(Task("b"), f"b{i}", EvalConfig()) for i in range(2)]  # submitted first, opened last
        a = [ex.submit(Task("a"), f"a{i}", EvalConfig()) for i in range(2)]
        ex.open_judging(LocalExecutor.gate(Task("a"), EvalConfig()))
        assert [f.result(timeout=30).message for f in a] == ["a0", "a1"]
        time.sleep(LANE_POLL_S + 0.2)
        assert not any(f.done() for f in b) and sorted(rec.judged) == ["a0", "a1"]
        ex.open_judging()  # the check ended: every gate
        assert [f.result(timeout=30).message for f in b] == ["b0", "b1"]


def test_candidate_errors_reach_the_caller_as_from_evaluate():
    rec = Recorder()
    with executor(rec) as ex, pytest.raises(CandidateError, match="no ModelNew"):
        ex.judge(Task("op"), "unusable source", EvalConfig())


def test_units_from_many_ops_interleave_through_judge():
    rec = Recorder(build_s=0.1, judge_s=0.01)
    results: dict[str, list[str]] = {}
    with executor(rec, workers=4) as ex:
        def op(name):
            results[name] = [ex.judge(Task(name), f"{name}-{i}", EvalConfig()).message for i in range(3)]

        threads = [threading.Thread(target=op, args=(f"op{k}",)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert all(results[f"op{k}"] == [f"op{k}-{i}" for i in range(3)] for k in range(4))
    first_four = {s.split("-")[0] for s in rec.judged[:4]}
    assert len(first_four) == 4  # each op's first candidate judged before any op's second
    assert rec.max_building >= 2


def test_no_compile_workers_judges_directly():
    rec = Recorder()
    with executor(rec, workers=0) as ex:
        assert ex.judge(Task("op"), "c", EvalConfig()).status is Status.VALID
    assert rec.max_building == 0


def test_unknown_executor_names_the_choices():
    with pytest.raises(ValueError, match="serial, local, ray"):
        make_executor("threads")


def test_closing_fails_units_still_waiting_instead_of_leaving_callers_blocked():
    rec = Recorder(build_s=0.0, judge_s=0.5)
    ex = executor(rec, workers=1)
    # more units than judging threads (four per GPU by default): some are still waiting at close
    futs = [ex.submit(Task("op"), f"c{i}", EvalConfig()) for i in range(ex.judges_per_device + 3)]
    # close once a judgement holds the device, not after a fixed sleep: on a loaded CI machine
    # 0.2 s was not always enough for the first unit to reach its judge. The first unit is the
    # first one a judging thread takes, so it is among those that finish
    deadline = time.monotonic() + 20
    while not rec.judging and time.monotonic() < deadline:
        time.sleep(0.01)
    assert rec.judging, "the first unit never reached its judge"
    ex.close()
    done = [f.exception(timeout=10) is None for f in futs]
    assert done[0] and not all(done)
    assert all("closed before judging" in str(f.exception()) for f, ok in zip(futs, done, strict=True) if not ok)
    with pytest.raises(RuntimeError, match="closed"):
        ex.submit(Task("op"), "late", EvalConfig())


def test_build_workers_run_at_lower_cpu_priority_than_judging():
    import os

    seen = {}

    def build(task, source, config):
        seen["build"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return BuildResult("built")

    def judge(task, source, config):
        seen["judge"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return verdict(task, source)

    with LocalExecutor(compile_workers=1, timing_devices=["cpu"], compile_cuts=False, judge_fn=judge,
                       build_fn=build) as ex:
        ex.judge(Task("op"), "c", EvalConfig())
    assert seen["build"] >= seen["judge"] + 10 or seen["build"] == 19


@pytest.mark.parametrize(("cores", "devices", "want"), [
    (16, ["cuda:0"], 6), (32, ["cuda:0", "cuda:1"], 6), (16, ["cuda:0", "cuda:1"], 4),
    (8, ["cuda:0"], 4), (4, ["cuda:0"], 2), (2, ["cpu"], 2), (64, ["cpu"], 2)])
def test_judging_threads_per_device_follow_the_cores_each_gpu_has(monkeypatch, cores, devices, want):
    from harness.executors.local import default_judges_per_device

    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert default_judges_per_device(devices) == want


def test_a_second_judging_thread_overlaps_start_up_but_never_holds_the_device_with_another(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 16)  # an H100 box's share of cores per GPU
    rec = Recorder(build_s=0.0, judge_s=0.05, start_s=0.05)
    with executor(rec, workers=2) as ex:
        assert ex.judges_per_device == 6  # the GPU default there
        out = [f.result(timeout=30) for f in [ex.submit(Task("op"), f"c{i}", EvalConfig(device="cuda:0"))
                                               for i in range(12)]]
    assert sorted(v.message for v in out) == sorted(f"c{i}" for i in range(12))
    assert rec.max_judging == 1  # the device is held by one judgement at a time
    assert rec.overlap >= 3  # while the next one's workers were starting


def test_one_judging_thread_per_device_when_asked():
    rec = Recorder(judge_s=0.02, start_s=0.02)
    with LocalExecutor(compile_workers=1, timing_devices=["cuda:0"], compile_cuts=False, judge_fn=rec.judge,
                       build_fn=rec.build, judges_per_device=1) as ex:
        [f.result(timeout=30) for f in [ex.submit(Task("op"), f"c{i}", EvalConfig(device="cuda:0"))
                                        for i in range(4)]]
    assert rec.overlap == 0


def test_the_compile_cuts_are_set_at_start_and_builds_do_not_wait_for_a_header(monkeypatch):
    """The precompiled headers are built on demand by the build that can use one (sandbox/build/pch.py),
    not in the build cache's key: the executor sets the cuts and builds start at once."""
    for k in ("KH_BUILD_PCH", "KH_BUILD_LITE", "KH_BUILD_SLIM"):
        monkeypatch.delenv(k, raising=False)
    rec = Recorder()
    with LocalExecutor(compile_workers=1, timing_devices=["cpu"], judge_fn=rec.judge, build_fn=rec.build) as ex:
        assert os.environ.get("KH_BUILD_PCH") == "1" and os.environ.get("KH_BUILD_SLIM") == "1"
        ex.submit(Task("op"), "good", EvalConfig(device="cpu")).result(timeout=30)
        summary = ex.summary()
    assert summary["cuts"]["pch"] is True and summary["cuts"]["lite"] is True


def test_an_idle_gpu_takes_a_unit_whose_build_has_not_started():
    """With nothing ready and nothing in flight on a GPU, a judging thread takes the earliest unit
    the compile pool has not started, and its judgement builds it (the judge's own build, beside its
    workers' start-up): the first verdict does not wait for the pool's builds. A CPU lane never does."""
    rec = Recorder(build_s=0.8, judge_s=0.02)
    for device, expect_unbuilt in (("cuda:0", True), ("cpu", False)):
        done_at: dict[str, float] = {}
        with LocalExecutor(compile_workers=1, timing_devices=[device], compile_cuts=False, judge_fn=rec.judge,
                           build_fn=rec.build, take_unbuilt=True) as ex:
            t0 = time.monotonic()
            futs = [ex.submit(Task("op"), f"{device}-c{i}", EvalConfig(device=device)) for i in range(3)]
            for f in futs:
                f.add_done_callback(lambda f, d=done_at, t=t0: d.setdefault(f.result().message, time.monotonic() - t))
            out = [f.result(timeout=30) for f in futs]
        taken = [v.message for v in out if v.evidence["executor"]["prebuild"] == "taken unbuilt"]
        if expect_unbuilt:
            assert taken and min(done_at[m] for m in taken) < 0.5, (taken, done_at)  # before any build finished
            assert ex.stats.built + len(taken) == 3
        else:
            assert not taken and ex.stats.built == 3 and min(done_at.values()) >= 0.8


def test_a_gpu_unit_whose_source_an_earlier_run_built_goes_straight_to_judging(tmp_path):
    """A source whose sealed tier holds a finished build (an earlier run's build worker promoted it:
    sandbox/build/tiers.py) is not built ahead again: it is judged at once and its judgement's own
    build step finds the cache, beside its workers' start. Only on a GPU lane and only for that
    source: a CPU unit, and a source never built, go through the compile pool as before."""
    from sandbox.build import buildcache, tiers

    root = str(tmp_path / "cache")
    seen, fresh = "# load_inline: built by an earlier run\n", "# load_inline: never built\n"
    tier = tiers.WorkTier.open(root, buildcache.layout(root, seen)[1])  # what an earlier build worker kept
    entry = Path(tier.path) / ("ab" * 32)
    entry.mkdir()
    (entry / "kh_ext.so").write_bytes(b"\x7fELF")
    (entry / ".ok").write_text("")
    tier.promote("build worker")
    tier.close()
    assert tiers.built_before(root, buildcache.layout(root, seen)[1])
    assert not tiers.built_before(root, buildcache.layout(root, fresh)[1])
    rec = Recorder(build_s=1.0, judge_s=0.02)
    for device in ("cuda:0", "cpu"):
        cfg = EvalConfig(device=device, build_dir=root)
        with LocalExecutor(compile_workers=1, timing_devices=[device], compile_cuts=False, judge_fn=rec.judge,
                           build_fn=rec.build, take_unbuilt=True) as ex:
            t0 = time.monotonic()
            first = ex.submit(Task("op"), seen, cfg)
            other = ex.submit(Task("op"), fresh, cfg)
            v = first.result(timeout=30)
            took = time.monotonic() - t0
            how = {k: f.result(timeout=30).evidence["executor"]["prebuild"] for k, f in (("seen", first), ("fresh", other))}
        if device == "cuda:0":
            assert how["seen"] == "built before" and took < 0.8, (how, took)  # no 1 s build first
            # the other: built by the pool, or taken unbuilt by the idle GPU before the pool started it
            assert how["fresh"] in ("built", "taken unbuilt") and ex.summary()["built_before"] == 1, how
        else:
            assert how == {"seen": "built", "fresh": "built"} and took >= 1.0 and ex.stats.built_before == 0, (how, took)
        assert v.message == seen


def test_the_executor_builds_the_judges_trusted_helpers_as_it_starts(tmp_path):
    """The op counter (and on a GPU the one-kernel compare) is built once per cache root before a
    judgement's clock starts. The executor starts that build at its first submit, beside the
    builds and a batch's task check, so the first judgement does not wait for it: here judging is
    held the whole time and the library is built all the same. On a GPU only: a CPU run's stray
    compile would run beside its next judgements' host timers."""
    from sandbox.build import buildcache
    from sandbox.rules import opcount

    cfg = EvalConfig(device="cuda:0", build_dir=str(tmp_path / "cache"))  # held: nothing runs on the GPU
    trusted = buildcache.layout(str(tmp_path / "cache"), "")[2]
    ex = LocalExecutor(compile_workers=0, timing_devices=["cuda:0"], compile_cuts=False, hold_judging=True)
    try:
        ex.submit(Task("op"), "import torch\n", cfg)
        deadline = time.monotonic() + 300
        while trusted not in opcount._READY and time.monotonic() < deadline:
            time.sleep(0.2)
        built, why = opcount._READY.get(trusted, (None, "never built"))
        assert built is not None and Path(built).is_file(), why
        assert Path(built).is_relative_to(tmp_path)
    finally:
        ex.abandon()
        ex.close()
