"""The local pipeline: compile workers build candidates ahead, timing workers judge them.

    ex = LocalExecutor()                       # cpu_count-1 compile workers, one timer per GPU
    verdict = ex.judge(task, source, config)   # blocks; call it from many threads (ops, methods)

Each unit goes first to the compile pool: a thread that runs ``sandbox.build.prebuild.prebuild`` (one
sandboxed build-only worker: import + ``ModelNew(...)``, no ``forward``) so ``load_inline``
builds land in the shared build cache. The pool takes the cheapest builds first (no compiler,
then sources already built once, then native builds; harness/executors/buildorder.py), so a
first verdict never waits behind an nvcc compile it does not need. A compile error is final there (the verdict the judge
would give; no timing slot). Everything else joins the ready queue; each timing worker takes
the earliest-submitted ready unit and judges it with ``sandbox.evaluate.evaluate`` (a cache hit:
no compile in the timing slot). Units from different ops and methods interleave in
submission order.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from harness.astlock import serialise_ast_parse
from harness.executors import buildorder
from harness.executors.base import ExecutorStats, JudgeFn
from harness.executors.cuts import CutsApplied, apply_compile_cuts
from harness.executors.lanechoice import LaneChoice
from harness.executors.localsizes import (  # noqa: F401 - default_timing_devices: the batch driver's and Ray's
    default_compile_workers,
    default_judges_per_device,
    default_timing_devices,
    lower_priority,
)
from harness.executors.sparekeeper import SpareKeeper
from sandbox.contract import EvalConfig, Task, Verdict, gpu_alone, machine_slots, parked_judgements

LANE_POLL_S = 0.5  # how often an idle judging thread looks again at its device's parked judgements


def ran_the_gpu_out(v: Verdict, cfg: EvalConfig) -> bool:
    """A GPU judgement ``rejected sandbox.resources`` by CUDA running out of memory while it shared
    the GPU (its reservation, sandbox/lane/gpumem.py, was not the whole GPU): the memory may have been
    other judgements', whatever the reservations said (session 32: an honest L2Norm kernel was
    rejected in 3 of 6 runs of one batch, at the harness's own poison step). The executor judges it
    again alone, and that verdict stands."""
    return (cfg.device.startswith("cuda") and v.rule == "sandbox.resources"
            and ("CUDA out of memory" in (v.logs or "") or "OutOfMemoryError" in (v.logs or ""))
            and not (v.evidence.get("gpu_memory") or {}).get("alone"))


@dataclass(order=True)
class _Unit:
    seq: int
    task: Task = field(compare=False)
    source: str = field(compare=False)
    config: EvalConfig = field(compare=False)
    future: Future = field(compare=False)
    build: Any = field(default=None, compare=False)
    unbuilt: bool = field(default=False, compare=False)  # an idle GPU took it before its build started
    built_before: bool = field(default=False, compare=False)  # its source's tier holds a build of an earlier run
    gate: Any = field(default=None, compare=False)  # LocalExecutor.gate: judged once open (hold_judging)


class LocalExecutor(LaneChoice, SpareKeeper):
    name = "local"

    def __init__(self, compile_workers: int | None = None, timing_devices: list[str] | None = None,
                 compile_cuts: bool = True, judge_fn: JudgeFn | None = None,
                 build_fn: Callable[..., Any] | None = None, build_nice: int = 10,
                 judges_per_device: int | None = None, hold_judging: bool = False,
                 take_unbuilt: bool | None = None, spare_references: bool | None = None) -> None:
        serialise_ast_parse()  # candidates are parsed from several threads (static scan)
        self.compile_workers = default_compile_workers() if compile_workers is None else compile_workers
        self.devices = timing_devices or default_timing_devices()
        # the precompiled headers are built on demand, per flag set, by the first build that can use
        # one (sandbox/build/pch.py); they are not in the build cache's key
        self.cuts: CutsApplied = apply_compile_cuts() if compile_cuts else CutsApplied()
        self.stats = ExecutorStats()
        self._judge_fn = judge_fn
        self._build_fn = build_fn
        self._seq = itertools.count()
        self._ready: list[_Unit] = []
        self._units: dict[int, _Unit] = {}  # submitted, not yet resolved
        self._cv = threading.Condition()
        self._closed = False
        # an idle GPU takes units whose build has not started (_can_take_unbuilt); default: with the
        # real build and judge only (a test's stand-ins say so themselves)
        self._take_unbuilt_ok = (build_fn is None and judge_fn is None) if take_unbuilt is None else take_unbuilt
        self._trusted_started = False  # prepare_trusted started (at the first submit)
        # held: builds only, and a unit is judged once its gate is open (open_judging: a batch's task
        # check opens each task as it passes, and all of them when it ends)
        self._open_all = not hold_judging
        self._open: set[Any] = set()
        self._to_build: list[tuple[int, int, _Unit]] = []  # (build class, seq, unit): cheapest first
        self._built_sources: set[str] = set()  # native sources this executor has built once
        self.build_order: list[int] = []  # seq of each unit as its build started (for tests and stats)
        self._builders = [threading.Thread(target=self._build_loop, args=(build_nice,), name=f"kh-build-{k}",
                                           daemon=True) for k in range(self.compile_workers)]
        for t in self._builders:
            t.start()
        # judges_per_device threads per device: a judgement holds its device exclusively from the
        # moment its workers are up (sandbox/lane/devicelock.py), so the other threads only overlap the
        # next judgements' worker start-up (Python, torch, CUDA context) with the current one's
        # checks and timing (default_judges_per_device); KH_JUDGES_PER_DEVICE: an operator's override
        default = default_judges_per_device(self.devices)
        self.judges_per_device = max(1, judges_per_device or int(os.environ.get("KH_JUDGES_PER_DEVICE") or default))
        # as many threads again for the judgements that gave their device up during a slow first call
        # (sandbox/lane/firstcall.py: parked, holding no device): a thread takes a unit only while fewer
        # than judges_per_device of the device's judgements are in flight and not parked, so a slow
        # or hanging warm-up occupies its own judgement, not a lane
        self._running = dict.fromkeys(self.devices, 0)
        self._timers = [threading.Thread(target=self._timing_loop, args=(d,), name=f"kh-time-{d}-{k}", daemon=True)
                        for d in self.devices for k in range(2 * self.judges_per_device)]
        for t in self._timers:
            t.start()
        # reference workers started ahead of the judgements (harness/executors/sparekeeper.py)
        self._start_spares(spare_references, real_judge=judge_fn is None)

    # -- public ---------------------------------------------------------------------------
    def submit(self, task: Task, source: str, config: EvalConfig) -> Future[Verdict]:
        if self._closed:
            raise RuntimeError("the local executor is closed")
        fut: Future[Verdict] = Future()
        unit = _Unit(next(self._seq), task, source, config, fut, gate=self.gate(task, config))
        if self._judge_fn is None and not self._trusted_started and str(config.device).startswith("cuda"):
            self._trusted_started = True  # the judge's own helpers, built now beside the builds (and a batch's
            # task check), not by the first judgement; a GPU's only (on a CPU a stray compile would run beside
            # the next judgements' host timers when a run stops before it judges)
            threading.Thread(target=self._prepare_trusted, args=(config,), name="kh-trusted", daemon=True).start()
        self._units[unit.seq] = unit
        fut.add_done_callback(lambda _f, k=unit.seq: self._units.pop(k, None))
        self._spare_config(config)
        self.stats.mark_submit()
        cls = buildorder.build_class(source, self._built_sources)
        if not self._builders or (cls == buildorder.NO_BUILD and self._build_fn is None):
            # nothing for the real build worker to compile (pure PyTorch; Triton compiles at the first
            # call, in the judge's warm-up): straight to a timing lane, not behind a worker start-up
            # (on the H100 the first verdict of a mixed batch came 105 s after submission)
            self._enqueue(unit)
        elif self._known_built(unit, cls):
            unit.unbuilt = unit.built_before = True
            with self.stats.lock:
                self.stats.built_before += 1
            self._enqueue(unit)
        else:
            with self._cv:
                heapq.heappush(self._to_build, (cls, unit.seq, unit))
                self._cv.notify_all()
        return fut

    def _known_built(self, unit: _Unit, cls: int) -> bool:
        """A GPU unit whose source an earlier run built into the cache (its sealed tier holds a
        finished build: sandbox.contract.built_before) goes straight to a judging lane, as an
        unbuilt unit an idle GPU takes: its judgement's own build step finds the builds beside its
        workers' start, instead of a compile worker starting a build worker (9-12 s on the H100 for
        a cache hit) before the judgement may start. With every build cached, a batch's first
        verdict waited 13 s for that (session 30). A hint, never a verdict: a build the cache does
        not have after all is built by the judgement itself. GPU lanes only (_can_take_unbuilt)."""
        if not (self._take_unbuilt_ok and cls != buildorder.NO_BUILD and str(unit.config.device).startswith("cuda")):
            return False
        from sandbox.contract import built_before

        return built_before(unit.source, unit.config)

    @staticmethod
    def _prepare_trusted(config: EvalConfig) -> None:
        from sandbox.contract import prepare_trusted

        try:
            prepare_trusted(config)
        except Exception:  # noqa: BLE001 - the first judgement builds them itself and reports what fails
            pass

    def judge(self, task: Task, source: str, config: EvalConfig) -> Verdict:
        return self.submit(task, source, config).result()

    def summary(self) -> dict[str, Any]:
        s = self.stats.summary(timing_slots=len(self.devices))
        s.update(executor=self.name, compile_workers=self.compile_workers, timing_devices=self.devices,
                 judges_per_device=self.judges_per_device,
                 cuts=dataclasses.asdict(self.cuts))
        return s

    def abandon(self) -> None:
        """The run stopped (Ctrl-C, SIGTERM): no unit starts from now on, and the builds in flight
        are given up, their workers killed (sandbox/worker/threadworkers.py), so ``close`` does not
        wait for them. A build at nice 19 on a loaded machine could take minutes. A judgement in
        flight is not cut short: its verdict is stored as it comes, and a killed worker would be
        judged a crash."""
        from sandbox.contract import thread_workers

        with self._cv:
            self._closed = True
            self._to_build.clear()
            self._cv.notify_all()
        for t in self._builders:
            thread_workers.stop(t)

    def close(self) -> None:
        """Stop the workers. Units still waiting (an interrupted run) fail with RuntimeError; a
        build or judgement already running finishes first (its sandboxed processes are ours),
        except the builds that ``abandon`` gave up."""
        with self._cv:
            self._closed = True
            self._to_build.clear()  # not started: failed below like every unit still waiting
            self._cv.notify_all()
        for t in self._builders:
            t.join()
        for t in self._timers:
            t.join()
        self._stop_spares()  # after every judgement: a spare's worker dies with the thread that started it
        for unit in list(self._units.values()):
            if not unit.future.done():
                unit.future.set_exception(RuntimeError("the local executor closed before judging this candidate"))
        self._ready.clear()

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- workers --------------------------------------------------------------------------
    def _build_loop(self, nice: int) -> None:
        lower_priority(nice)
        while True:
            with self._cv:
                while not self._to_build and not self._closed:
                    self._cv.wait()
                if self._closed:
                    return
                _, _, unit = heapq.heappop(self._to_build)
                self.build_order.append(unit.seq)
            self._build(unit)
            if buildorder.build_class(unit.source, set()) != buildorder.NO_BUILD:
                with self._cv:  # later copies of this source are likely cache hits: they move up
                    self._built_sources.add(buildorder.source_key(unit.source))
                    self._to_build = [(buildorder.build_class(u.source, self._built_sources), q, u)
                                      for _, q, u in self._to_build]
                    heapq.heapify(self._to_build)

    def _build(self, unit: _Unit) -> None:
        build = self._build_fn
        if build is None:
            from sandbox.contract import prebuild

            build = functools.partial(prebuild, memo=True)  # the judgement then skips its own build worker
        try:
            res = build(unit.task, unit.source, unit.config)
        except Exception as e:  # noqa: BLE001 - the judge reports what the builder could not
            from sandbox.contract import BuildResult

            res = BuildResult("not_built", message=f"prebuild raised {type(e).__name__}: {e}")
        unit.build = res
        with self.stats.lock:
            self.stats.build_wall_s.append(res.wall_s)
            if res.builds:
                self.stats.build_compile_s.append(res.compile_s)
            if res.outcome == "built":
                self.stats.built += 1
            elif res.outcome == "compile_error":
                self.stats.compile_errors += 1
            else:
                self.stats.not_built += 1
        if res.outcome == "compile_error" and res.verdict is not None:
            res.verdict.evidence.setdefault("executor", {"name": self.name, "timing_slot": False})
            unit.future.set_result(res.verdict)
            self.stats.mark_done()
            return
        self._enqueue(unit)

    def _enqueue(self, unit: _Unit) -> None:
        with self._cv:
            heapq.heappush(self._ready, unit)
            self._cv.notify_all()  # builders wait on the same condition: a single notify could wake one

    def _timing_loop(self, device: str) -> None:
        judge = self._judge_fn
        if judge is None:
            from sandbox.contract import evaluate as judge
        while True:
            with self._cv:
                unit = None
                while not self._closed:
                    if self._lane_free(device):
                        unit = self._pop_ready() or (self._take_unbuilt() if self._can_take_unbuilt(device) else None)
                        if unit is not None:
                            break
                    self._cv.wait(timeout=LANE_POLL_S)  # a judgement parks or resumes outside this condition
                if unit is None:  # closed
                    return
                self._running[device] += 1
            slot = None
            try:
                slot, waited = self._machine_slot(device)
                if slot is not False:  # False: closed while waiting; close() fails the unit like those still waiting
                    self._judge_unit(unit, device, judge, waited)
            finally:
                if slot:
                    slot.release()
                with self._cv:
                    self._running[device] -= 1
                    self._cv.notify_all()

    def _machine_slot(self, device: str) -> Any:
        """The machine's slots for one judgement in flight on ``device`` (sandbox/lane/slots.py):
        several harness processes on one machine share judges_per_device per GPU instead of each
        starting as many. One slot a judgement: its share of the GPU's memory is reserved by the
        judge itself, from its arena on (sandbox/lane/gpumem.py; session 29 weighed these slots,
        which held the memory through both workers' start-up). (slots, seconds waited); (None,
        None) where nothing is counted (a CPU device, KH_MACHINE_SLOTS=0); (False, ...) once the
        executor closed while waiting. The slots this process may try grow with its parked
        judgements, as its lanes do (_lane_free)."""
        try:
            base = machine_slots.base_for(device)
            if base is None:
                return None, None
            slot, waited = machine_slots.take(base, lambda: self.judges_per_device + parked_judgements(device),
                                              lambda: self._closed)
        except OSError:  # the slot files cannot be made or opened here: judged as if not counted
            return None, None
        with self.stats.lock:
            self.stats.slot_wait_s += waited
        return (False if slot is None else slot), waited

    def _lane_free(self, device: str) -> bool:
        """Fewer than judges_per_device of ``device``'s judgements are in flight and not parked."""
        return self._running[device] - parked_judgements(device) < self.judges_per_device

    def _judge_unit(self, unit: _Unit, device: str, judge: JudgeFn, slot_wait: float | None = None) -> None:
        cfg = self.lane_config(unit.config, device)
        t0 = time.monotonic()
        held: float | None = None
        try:
            v = judge(unit.task, unit.source, cfg)
            if ran_the_gpu_out(v, cfg):  # beside other judgements: judged again with the GPU to itself
                first = v
                with gpu_alone():
                    v = judge(unit.task, unit.source, cfg)
                v.evidence["judged_again_alone"] = {"first": {"status": first.status.value, "rule": first.rule,
                                                              "message": first.message[:300]},
                                                    "why": "it ran the GPU out of memory beside other judgements"}
            held = v.durations_s.get("exclusive")
        except BaseException as e:  # noqa: BLE001 - CandidateError/TaskError go to the caller
            unit.future.set_exception(e)
        else:
            slot = {} if slot_wait is None else {"slot_wait_s": round(slot_wait, 3)}  # the machine-wide count's wait
            if unit.build is not None:
                b = unit.build  # what the build worker did (slim/lite cuts and their fallbacks)
                v.evidence.setdefault("executor", {"name": self.name, "prebuild": b.outcome,
                                                   "prebuild_compile_s": round(b.compile_s, 3),
                                                   "prebuild_build": {"builds": b.builds, "cache_hits": b.cache_hits,
                                                                      **(b.extra or {})},
                                                   "lane": device, **slot})
            else:  # nothing to compile ahead, or an idle GPU took it unbuilt: it came straight to this lane
                how = "built before" if unit.built_before else "taken unbuilt" if unit.unbuilt else "none"
                v.evidence.setdefault("executor", {"name": self.name, "prebuild": how, "lane": device, **slot})
            unit.future.set_result(v)
        finally:
            with self.stats.lock:  # busy = the time the device was held (whole judgement if unknown)
                self.stats.busy_s += held if held is not None else time.monotonic() - t0
                self.stats.judged += 1
            self.stats.mark_done()
