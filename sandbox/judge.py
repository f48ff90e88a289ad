"""The parent's judging phases: start both workers, check correctness, time, decide (run from
the outside by sandbox/judgement.py's ``judge``, which ``evaluate()`` ends in).

Phases (cascade: stop at the first failure): static checks -> start reference + candidate
workers -> import candidate (compile) -> correctness trials -> determinism -> profile
(custom-code rule) -> extra shapes (final) -> timing (sandbox/timing/measure.py) -> verdict.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from typing import Any

from sandbox import rules
from sandbox.build import buildcache, buildphase, pch
from sandbox.build.tiers import WorkTier
from sandbox.check import fusedcompare, refcache
from sandbox.check.calls import Checks, ReferenceFailed, Reject, failure_status
from sandbox.config import EvalConfig
from sandbox.intake import scan
from sandbox.intake.candidate import Entry, entry_point
from sandbox.intake.datasize import device_arena_fits, judged_sizes, judgement_gpu_bytes
from sandbox.intake.task import Task, TaskError
from sandbox.isolation import get_launcher
from sandbox.isolation.base import SandboxUnavailable
from sandbox.isolation.process import outer_uid
from sandbox.lane import devicelock, gpumem, holdcpu, spares
from sandbox.lane.devicelock import DeviceLock, device_lock
from sandbox.lane.firstcall import FirstCalls
from sandbox.modelsetup import ModelSetups
from sandbox.rules import opcount
from sandbox.rules.customcode import check_profiled_call
from sandbox.rules.kernelowners import prewarm as _prewarm_kernel_names
from sandbox.timing import baselinebook, sol
from sandbox.timing.measure import time_candidate
from sandbox.verdict import Mode, Status, Verdict
from sandbox.worker import arenahint, arenasetup
from sandbox.worker.arena import Arena
from sandbox.worker.judgeenv import cache_root, environment, worker_limits
from sandbox.worker.session import WorkerDied, WorkerSession

WARM_SEED = 12345  # public: the warm-up calls are never checked


class Judge(Checks, ModelSetups):
    """One judgement's state and phases; requests and output checks are in Checks, the models'
    setups in ModelSetups."""

    def __init__(self, task: Task, source: str, config: EvalConfig) -> None:
        self.task, self.source, self.cfg = task, source, config
        self.final = config.mode is Mode.FINAL
        # the reference builds torch.compile's baseline (the warm-apart worker's never times: False)
        self.baseline_compile = spares.preload_for(config)
        self.v = Verdict(status=Status.VALID, mode=config.mode, device=config.device, task=task.name,
                         candidate_sha256=hashlib.sha256(source.encode()).hexdigest(),
                         allow_torch_ops=config.allow_torch_ops, rules=config.rules,
                         host_timers=not config.device.startswith("cuda"))
        if self.final:
            self.base_seed = secrets.randbits(48)
        elif config.seed is not None:
            self.base_seed = int(config.seed)
        else:
            self.base_seed = int(hashlib.sha256(task.name.encode()).hexdigest()[:10], 16)
        self.init_seed = self.base_seed ^ 0x5EED
        self.atol, self.rtol = task.meta.atol, task.meta.rtol
        self.ref: WorkerSession | None = None
        self.cand: WorkerSession | None = None
        self.t0 = time.monotonic()
        self.deadline = self.t0 + config.timeout_s
        self.ref_bytes: list[int] = []  # sizes of the reference's last outputs (poison, output size bound)
        self.arena: Arena | None = None  # the judgement's shared memory (sandbox/worker/arena.py), made by start()
        self.staged: tuple[int, list[Any]] | None = None  # (seed, header) of the candidate's staged inputs
        self.opcount_path: str | None = None  # path of sandbox/rules/opcount.py's built module (judge())
        self.fused_src: tuple[str, str] | None = None  # (path, sha256) of sandbox/check/fusedcompare.py's library
        self.fused_cmp: tuple[str, str] | None = None  # ... its copy in the reference worker's scratch (start())
        self.entry = Entry("ModelNew")  # the class judged (run() resolves it, sandbox/intake/candidate.py)
        self.ref_call_s = 0.0  # the reference's slowest call so far (parent clock): per-call bounds
        self.hold_until: float | None = None  # CUDA: no request may run past this (the GPU-held bound)
        self._lock: DeviceLock | None = None  # this device's lock, while held
        self.ticket = devicelock.ticket()  # its place in line for the device (the oldest goes first)
        self.lock_rank = devicelock.JUDGING  # the warm-apart worker's Judge waits behind judging pairs
        self._held_since = 0.0
        self._hold_cpu: holdcpu.HoldCpu | None = None  # CPU and run-queue time over the hold (lane/holdcpu.py)
        self.book_pending: dict[tuple[str, ...], list[float]] = {}  # baselines to book once valid (timing.py)
        self.phase = ""  # "import" or "warm" while buildphase.open_and_warm runs (its fallbacks), then "judge"
        self.tier: WorkTier | None = None  # this judgement's working copy of its build tier (sandbox/build/tiers.py)
        # the warm-up's one budget and its record of the device given up (sandbox/lane/firstcall.py)
        self.first_calls = FirstCalls(config.first_call_timeout_s)
        self.warm_setup_s: dict[str, float] = {}  # the candidate's setup at each profile in the warm-up
        # its share of the GPU's memory, from its first arena to its end (sandbox/lane/gpumem.py);
        # the warm-apart worker's Judge shares it (sandbox/build/buildphase.py)
        self.gpu_mem = gpumem.GpuMemory()

    # -- helpers -----------------------------------------------------------------------
    def overrides(self, profile: str) -> dict[str, Any]:
        return dict(self.task.shapes.get(profile, {})) if profile != "default" else {}

    def open_tier(self) -> WorkTier:
        """The judgement's private working copy of the candidate's build tier: written by its
        build step, read-only to its judging workers (the late order's: writable), deleted with
        the judgement (sandbox/build/tiers.py)."""
        if self.tier is None:
            _, own, _ = buildcache.layout(cache_root(self.cfg), self.source)
            self.tier = WorkTier.open(cache_root(self.cfg), own)
        return self.tier

    # -- phases ------------------------------------------------------------------------
    def start(self, cache_ro: bool = False) -> None:
        launcher = get_launcher(self.cfg.sandbox, unsafe=self.cfg.unsafe_no_isolation)
        check = getattr(launcher, "check", None)
        if callable(check):
            check()  # IsolationUnavailable: a setup error, before any worker starts
        _prewarm_kernel_names(self.cfg)  # the libraries' kernel names, listed while this judgement builds
        shared, own, trusted = buildcache.layout(cache_root(self.cfg), self.source)
        limits, ram = worker_limits(self.cfg)
        hide = list(self.cfg.hidden_paths)
        persist = refcache.entry_dir(cache_root(self.cfg), self.task.source, self.cfg.device)

        def reference(w: WorkerSession | None = None) -> WorkerSession:
            """A spare ``w`` (adopted), or the judgement's own; the one-kernel compare placed where
            it can read it: its own scratch."""
            w = w or WorkerSession("reference", launcher, self.cfg.device, None, self.deadline, limits,
                                   persist=persist, preload=self.baseline_compile)
            if self.fused_src is not None:
                self.fused_cmp = (fusedcompare.place(self.fused_src[0], w.scratch), self.fused_src[1])
            return w

        spare = spares.take(spares.key(self.cfg, self.baseline_compile))  # started ahead by an executor
        if spare is not None:
            spare.adopt(self.deadline, persist)
            self.v.evidence["reference_worker"] = "spare"
        self.ref = reference(spare)
        tier = self.open_tier()
        self.cand = WorkerSession("candidate", launcher, self.cfg.device, own, self.deadline, limits, hide=hide,
                                  shared=[shared, trusted, *pch.shared()], uid=outer_uid(own), cache_ro=cache_ro,
                                  tier=tier.path, tier_quota=tier.quota)
        try:
            try:
                self.ref.connect()
            except WorkerDied as e:
                if spare is None:
                    raise
                # a spare gone since it was started (nothing ran in it): this judgement starts its own
                self.v.evidence["reference_worker"] = f"spare failed ({str(e)[:200]}); its own started"
                self.ref = reference()
                self.ref.connect()
            self.cand.connect()
        except WorkerDied as e:
            # no candidate code has run in these workers yet: a worker that does not come up is the
            # machine's or the jail's problem, never a verdict (it was blamed on the candidate as
            # sandbox.interference when the reference alone, under other limits, started)
            raise SandboxUnavailable(f"{e}\n(a worker did not start before any candidate code ran in it: "
                                     "a problem of this machine or of the jail, not of the candidate; "
                                     "`harness doctor` checks the jail)") from e
        # each worker's own start-up (Python, torch, the reference's compile preload), on the critical path
        # of every judgement: side by side, and beside the build worker's (durations_s["build"])
        self.v.evidence["worker_start_s"] = {w.role: w.start_s for w in (self.ref, self.cand)}
        sizes = judged_sizes(self.task, self.cfg) if self.cfg.device.startswith("cuda") else []
        if sizes:
            self._reserve_gpu_memory(sizes)
        self.arena = arenasetup.attach(self.ref, self.cand, self.cfg.device, ram, self.v.evidence,
                                       device_arena_fits(self.task, self.cfg, sizes), sizes)
        self.v.environment = environment(self.cfg.device, self.cand.isolation)
        if self.cfg.device.startswith("cuda"):  # asked of the worker: no CUDA context in the parent
            info, _ = self.ref.request("device_name")
            self.v.environment["gpu"] = info.get("device_name")
        extra = getattr(launcher, "environment", None)
        if callable(extra):
            self.v.environment.update(extra())

    def _reserve_gpu_memory(self, sizes: list[Any]) -> None:
        """Wait for this judgement's share of the GPU's memory before its arena takes any
        (sandbox/lane/gpumem.py). The wait is not the candidate's time: its deadlines move by as much."""
        waited = self.gpu_mem.reserve(self.cfg.device, judgement_gpu_bytes(self.task, self.cfg, sizes))
        if waited > 0:
            self._move_deadlines(waited)
            self.v.durations_s["memory_wait"] = round(self.v.durations_s.get("memory_wait", 0.0) + waited, 3)

    def _move_deadlines(self, waited: float) -> None:
        """A wait that is not the candidate's time (memory, the device): every deadline moves by it."""
        self.deadline += waited
        for w in (self.ref, self.cand):
            if w is not None:
                w.deadline += waited

    def _take_device(self) -> None:
        """Wait for the device (sandbox/lane/devicelock.py): from here until close() no other
        judgement in this process runs code on it. The wait is not the candidate's time: its
        deadline moves by as much."""
        t = time.monotonic()
        self._lock = device_lock(self.cfg.device)
        self._lock.acquire(self.lock_rank, self.ticket)
        self._held_since = time.monotonic()
        self._hold_cpu = holdcpu.start({w.role: w.handle.pid for w in (self.ref, self.cand)})
        waited = self._held_since - t
        self._move_deadlines(waited)
        self.v.durations_s["queue"] = round(waited, 3)
        if self.cfg.device.startswith("cuda"):  # the warm-up's kernels, now that no one else times:
            # both workers' side by side (cuBLAS and module loading, ~0.15 s each on an H200), then
            # each one's spin calibration alone (sandbox/worker/warmup.py)
            pending = self.cand.begin("warm_device", part="kernels")  # the candidate's first: session.begin
            ref_rep = self.ref.request("warm_device", part="kernels")[0]
            for w, rep in ((self.ref, ref_rep), (self.cand, pending.result()[0])):
                if rep.get("ok"):
                    rep = w.request("warm_device", part="spin")[0]
                if not rep.get("ok"):
                    failed = ReferenceFailed if w is self.ref else RuntimeError
                    raise failed(f"the {w.role} worker's GPU warm-up failed: {rep.get('error', '')[:2000]}")

    def import_candidate(self) -> None:
        path = os.path.join(self.cand.scratch, os.path.basename(self.cfg.candidate_name) or "candidate.py")
        with open(path, "w") as f:
            f.write(self.source)
        hidden = [*self.cfg.hidden_paths]
        sha = opcount.file_sha256(self.opcount_path) if self.opcount_path else None
        rep, rtt = self.cand.request("import", candidate_path=path, hidden=hidden, opcount=self.opcount_path,
                                     opcount_sha256=sha)
        here = {k: rep.get(k) for k in ("builds", "cache_hits", "lite", "lite_fallbacks", "slim", "slim_fallbacks",
                                          "pch")}
        self.v.durations_s["compile"] = round(self.v.durations_s.get("compile", 0.0) + float(rep.get("compile_s", 0.0)), 3)
        self.v.durations_s["import"] = round(rtt / 1e9, 3)
        if "build" in self.v.evidence:  # the build worker built it (sandbox/build/buildphase.py)
            self.v.evidence["build_judging_worker"] = here
        else:
            self.v.evidence["build"] = here
        if not rep.get("ok"):
            status = failure_status(rep, "importing the candidate ran out of its memory limit")
            what = "compiling" if status is Status.COMPILE_ERROR else "importing"
            raise Reject(status, None, f"{what} the candidate failed", log=rep.get("error", ""))
        self.check_monitor("import")

    def correctness(self, profile: str, trials: int, seed0: int, label: str | None = None,
                    rule_fail: str | None = None) -> None:
        label = label or profile
        determinism = rule_fail is None and trials > 0
        for i in range(trials):
            seed = seed0 + i
            self.ref_call(seed)
            if i == 0:  # poison blocks of the reference's output sizes from the very first call
                self.cand.request("poison", bytes=self.ref_bytes)
            self.cand_call(seed)
            self.check_against(seed, label, len(self.v.trials), rule_fail, ref_ready=True,
                               keep="first" if i == 0 and determinism else None)
        if determinism:
            self.cand_call(seed0)  # the same seed again: must reproduce
            rep = self.check_output(f"seed {seed0} again", against="first")
            if not rep.get("passed"):
                raise Reject(Status.INCORRECT, rules.NONDETERMINISTIC,
                             f"seed {seed0} run twice gave different outputs: {rep.get('message')}")

    def extra_profiles(self, profile: str) -> list[str]:
        return [p for p in self.task.extra_profiles
                if (p.startswith("small_extra") if profile.startswith("small") else p.startswith("extra"))]

    def warm(self, profile: str, extras: list[str]) -> None:
        """Build and JIT everything before judging: one call of the candidate at each profile it
        will be judged at (Triton and lazy builds compile here, with a public seed, unchecked),
        then seal the worker: no process may start from here on, and none may be left running."""
        fc = self.first_calls  # one budget, and the device given up while slow (sandbox/lane/firstcall.py)
        for p in [profile, *extras]:
            t = time.monotonic()
            with fc.watch(self, spend=False):
                self.setup(p)  # the reference too: it makes the warm-up call's inputs
            self.warm_setup_s[p] = max(self.warm_setup_s.get(p, 0.0), time.monotonic() - t - fc.parked_s)
            with fc.watch(self, spend=True):
                self.cand_call(WARM_SEED, bound=fc.bound())
        rep, _ = self.cand.request("seal", bound=self.call_bound(floor=10.0))
        if self.cfg.device.startswith("cuda"):
            self.hold_until = time.monotonic() + self.cfg.gpu_hold_s
        self.v.evidence["sealed"] = bool(rep.get("sealed"))
        if not rep.get("sealed"):
            self.v.evidence["seal"] = rep.get("why", "")
        extra = getattr(self.cand.handle, "extra_processes", lambda: 0)()
        if extra > 0:
            raise Reject(Status.REJECTED, rules.SUBPROCESS,
                         f"{extra} process(es) the candidate started were still running when judging began")

    def reopen(self) -> None:
        """Close the judging workers, the arena and the device lock to start over (the
        warm-apart order's fallback, a lane restart), as ``close`` does (``_stop_workers``)."""
        try:
            self._stop_workers()
        finally:
            self.cand = self.ref = None
            if self.arena is not None:
                self.arena.close()
                self.arena = None
        self.hold_until = None
        self.staged = None

    def _stop_workers(self) -> None:
        """Both workers asked to exit first (their CUDA contexts go down together), the device
        given up once they are gone, then their files cleaned, outside the lock: a first call that
        yields the lane waits only for its workers' end (H200, 2026-11-26). The reference's exit
        stays inside too: tried outside on a GPU in session 28, it shortened no hold (0.216 s of
        close inside, as before), and a context's teardown frees its memory (which the driver may
        clear) on the GPU the next judgement then holds."""
        workers = [w for w in (self.cand, self.ref) if w is not None]
        if self._hold_cpu is not None:  # the last hold's (a lane yield or a fallback holds again)
            self.v.evidence["hold_cpu"], self._hold_cpu = holdcpu.finish(self._hold_cpu), None
        try:
            try:
                for w in workers:
                    w.stop_begin()
            finally:
                for w in workers:
                    w.stop_end()
        finally:
            if self._lock is not None:
                self.v.durations_s["exclusive"] = round(time.monotonic() - self._held_since, 3)
                self._lock.release()
                self._lock = None
            for w in workers:
                w.cleanup()

    def custom_code(self, seed: int) -> None:

        check_profiled_call(self, seed)

    def run(self) -> Verdict:
        cfg = self.cfg
        tree = scan.validate(self.source, cfg.candidate_name, self.task.source)
        self.entry = entry_point(tree, cfg.candidate_name, self.task.source)
        self.v.evidence["entry"] = self.entry.evidence()  # the attribute judged and the class it binds
        if self.entry.notes:
            self.v.evidence["accommodations"] = list(self.entry.notes)
        hit = scan.scan(tree)
        if hit:
            raise Reject(Status.REJECTED, hit[0], f"{cfg.candidate_name}: {hit[1]}", static_scan=True)
        profile = cfg.profile
        if profile != "default" and profile not in self.task.shapes:
            raise TaskError(f"{self.task.path}: no shape profile {profile!r} (has {self.task.profiles})")

        extras = self.extra_profiles(profile) if self.final else []
        order, why = buildphase.plan(self.source, cfg.device)
        if order == "sealed" and not buildphase.build(self):
            order, why = "late", "the build worker did not finish; the judging worker imports it itself"
        if order == "warm-apart" and not buildphase.warm_apart(self, profile, extras):
            order, why = "late", "the warm-apart worker did not finish; the judging worker warms it itself"
        buildphase.warm_in_order(self, order, why, profile, extras)
        self.setup(profile)
        t = time.monotonic()
        self.correctness(profile, cfg.correctness_trials, self.base_seed)
        self.custom_code(self.base_seed + cfg.correctness_trials)
        self.check_monitor("correctness")
        if self.final:
            for j, p in enumerate(extras):
                self.setup(p)
                self.correctness(p, 2, self.base_seed + 1000 * (j + 1), rule_fail=rules.HIDDEN_SHAPE)
            if extras:
                self.setup(profile)
        self.v.durations_s["check"] = round(time.monotonic() - t, 3)
        t = time.monotonic()

        time_candidate(self)
        self.v.durations_s["time"] = round(time.monotonic() - t, 3)
        self.check_monitor("timing")
        sol.judge_speed_of_light(self, profile)
        self.v.status, self.v.message = Status.VALID, "correct on all trials; timed"

        for k, samples in self.book_pending.items():  # only a valid judgement's baselines are booked
            baselinebook.put(k, samples)
        return self.v

    def close(self) -> None:
        req = {f"{w.role}.{op}": [n, round(sec, 3)] for w in (self.ref, self.cand) if w is not None
               for op, (n, sec) in sorted(w.op_time.items())}
        if req:
            self.v.evidence["requests"] = req  # [count, seconds] per worker request (parent clock)
        if self.arena is not None:  # region sizes, and whether each worker's mapping is pinned (CUDA)
            self.v.evidence["arena"] = arenasetup.evidence(self.arena, self.ref, self.cand)
            arenahint.remember(self.arena, self.ref.persist if self.ref is not None else None)
        t = time.monotonic()
        try:
            self._stop_workers()
        finally:
            self.v.durations_s["close"] = round(time.monotonic() - t, 3)
            if self.ref is not None and self.ref.persist is not None:  # sandbox/check/refcache.py
                self.v.evidence["reference_cache"] = {"seeded_files": self.ref.seeded,
                                                      "harvested_files": self.ref.harvested,
                                                      "preload_s": self.ref.preload_s}
            if self.arena is not None:
                self.arena.close()
