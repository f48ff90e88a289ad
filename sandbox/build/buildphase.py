"""Builds apart from judging (issue "Isolation", item 2).

A candidate with C++/CUDA extension sources is first imported by a separate jailed build worker
(``sandbox/build/prebuild.py``: the compilers run there, writing only the judgement's working copy of the
candidate's tier of the build cache, sandbox/build/tiers.py). The judging worker then mounts that copy
read-only and is sealed (no exec, seccomp) before it imports the candidate: it only loads finished
builds and can start no process. The late order's judging worker mounts it writable; the copy is
deleted with the judgement, and only the build worker's new build entries are kept.

CUDA sources are built the same way, by a build worker without a GPU, for this machine's GPU
arch (sandbox/worker/session.py: ``cuda_build``).

Sources that compile at their first call (Triton, cupy, numba, ``torch.compile``) take the
"warm-apart" order: a throwaway candidate worker, with the GPU and its build dir writable,
imports the candidate and makes the warm-up calls (every profile judged), so that JIT compiles,
launcher builds and their caches land in the candidate's own tier; it is closed. The judging
worker then mounts that tier read-only, runs the harness's own Triton warm-up (trusted code, no
candidate loaded yet: the compiler version probes and driver helpers Triton caches per process)
and is sealed before it imports the candidate; its warm-up calls hit the caches.

Two cases keep the earlier "late" order (the judging worker imports with its build dir
writable and is sealed after the warm-up calls), recorded in ``evidence.build_apart`` with the
reason: a sealed warm-up that failed where the warm-apart worker's succeeded (some JIT stacks
start a process even on a cache hit: the judgement is redone in the late order, never failed
for it), and ``KH_BUILD_APART=cpu`` in the parent's environment, which keeps every CUDA
judgement in the late order (an operator's switch, e.g. for a GPU stack where the sealed order
fails).

The markers are read from the source: a candidate that hides its extension build from them is
judged sealed and its build fails in the judging worker (a compile or runtime error, its own).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from sandbox import rules
from sandbox.errors import Reject
from sandbox.verdict import Status

if TYPE_CHECKING:
    from sandbox.build.tiers import WorkTier
    from sandbox.config import EvalConfig
    from sandbox.intake.candidate import Entry
    from sandbox.intake.task import Task
    from sandbox.lane.firstcall import FirstCalls
    from sandbox.verdict import Verdict
    from sandbox.worker.session import WorkerSession


class Judging(Protocol):
    """What the build phase uses of the judgement in progress (sandbox/judge.py's ``Judge`` has it): the
    task, source and config, its workers and their (re)start, its build tier, its place in the
    device's line and its warm-up. ``warm_apart`` makes a second judgement of the same type."""

    v: Verdict
    task: Task
    source: str
    cfg: EvalConfig
    ref: WorkerSession | None
    cand: WorkerSession | None
    phase: str
    t0: float
    deadline: float
    ticket: int
    lock_rank: int
    opcount_path: str | None
    entry: Entry
    tier: WorkTier | None
    first_calls: FirstCalls

    def open_tier(self) -> WorkTier: ...

    def start(self, cache_ro: bool = False) -> None: ...

    def reopen(self) -> None: ...

    def import_candidate(self) -> None: ...

    def presetup(self, profile: str) -> None: ...

    def warm(self, profile: str, extras: list[str]) -> None: ...

    def call_bound(self, floor: float = ..., scale: float = 1.0) -> tuple[float, str]: ...

    def _take_device(self) -> None: ...


STOPPED_JOIN_S = 10.0  # the wait for a build or warm-apart thread whose workers were killed (``beside``)
NATIVE_BUILD = re.compile(r"\bload_inline\b|\bcpp_extension\b|\bRawKernel\b|\bRawModule\b|\bnvrtc\b|\bcompile_with_cache\b")
# torch.compile, or a bare compile( imported from torch; not re.compile( or str.compile(
JIT_AT_CALL = re.compile(r"\btriton\b|\bcupy\b|\bnumba\b|\btorch\.compile\b|(?<![\w.])compile\s*\(|\btilelang\b|\bjax\b")


def plan(source: str, device: str) -> tuple[str, str]:
    """("sealed" | "late", why)."""
    if device.startswith("cuda") and os.environ.get("KH_BUILD_APART", "all") == "cpu":
        return "late", "CUDA: KH_BUILD_APART=cpu (the operator kept CUDA judgements in the late order)"
    if JIT_AT_CALL.search(source):
        return "warm-apart", ("the source compiles at its first call (Triton, cupy, numba or torch.compile): "
                              "a separate worker made the first calls; the judging worker loads their "
                              "caches read-only, sealed")
    return "sealed", "built by a separate build worker; the judging worker loads it read-only, sealed"


def build(j: Judging) -> bool:
    """Run the build worker when the source has extension sources. True when the judging worker
    may go sealed; False when the build worker could not finish (the judging worker then imports
    the candidate itself, as before, and reports what fails). A compile error is the verdict."""
    if not NATIVE_BUILD.search(j.source):
        return True
    from sandbox.build.prebuild import BuildResult, prebuild, take_built

    if take_built(j.task, j.source, j.cfg):  # the executor's build worker just did this very step
        j.v.evidence["build"] = {"by": "the executor's build worker (this process)"}
        return True
    tier = j.open_tier()
    box: dict[str, object] = {}

    def apart() -> None:
        try:
            box["res"] = prebuild(j.task, j.source, j.cfg, tier=tier)
        except BaseException as e:  # noqa: BLE001 - raised below, in the judgement's thread
            box["error"] = e

    beside(j, "build worker", apart)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    res = box["res"]
    assert isinstance(res, BuildResult)
    j.v.durations_s["build"] = round(res.wall_s, 3)
    j.v.durations_s["compile"] = round(res.compile_s, 3)
    j.v.evidence["build"] = {"builds": res.builds, "cache_hits": res.cache_hits, **res.extra}
    if res.outcome == "over_quota":
        raise Reject(Status.REJECTED, rules.RESOURCES, res.message)
    if res.outcome == "compile_error":
        raise Reject(Status.COMPILE_ERROR, None, res.message,  # the same verdict the judging worker would give
                     log=res.verdict.logs if res.verdict is not None else res.message)
    if res.outcome != "built":
        j.v.evidence["build_worker"] = res.message[:300]
        j.reopen()  # the late order starts its own judging workers (build dir writable)
    return res.outcome == "built"


def warm_apart(j: Judging, profile: str, extras: list[str]) -> bool:
    """The warm-apart worker: import and first calls in a throwaway candidate worker whose build
    dir is writable (the late order's steps, in a worker that never judges). True when the
    judging worker may go sealed; False when that worker died or broke the protocol (the
    judging worker then does it all itself, late, and gets the verdict for it). A compile
    error, a failed first call, a timeout or a process left running is the verdict (the late
    order gives the same)."""
    from sandbox.lane.devicelock import WARM_APART, YIELDED
    from sandbox.lane.devicelock import ticket as new_ticket
    from sandbox.lane.firstcall import LaneYield
    from sandbox.worker.session import CallTimeout, ProtocolViolation, WorkerDied

    b = type(j)(j.task, j.source, j.cfg)  # a Judge (not imported here: judge.py imports this module)
    b.opcount_path, b.entry, b.t0, b.deadline = j.opcount_path, j.entry, j.t0, j.deadline
    b.tier = j.open_tier()  # it writes the judgement's working copy; the judging workers read it
    b.first_calls = j.first_calls  # one budget for the judgement's first calls (sandbox/lane/firstcall.py)
    b.ticket, b.lock_rank = j.ticket, WARM_APART  # the unit's place in line, behind judging pairs
    b.baseline_compile = False  # its reference only makes the warm-up calls' inputs
    b.gpu_mem = j.gpu_mem  # one reservation of the GPU's memory for the judgement (sandbox/lane/gpumem.py)
    t = time.monotonic()
    state: dict[str, object] = {"ok": True}

    def apart() -> None:  # in a thread of its own: its workers live and die inside it (PR_SET_PDEATHSIG)
        try:
            while True:
                try:
                    b.start(cache_ro=False)
                    b.import_candidate()
                    b._take_device()
                    b.warm(profile, extras)
                    break
                except LaneYield:  # its GPU work held the device while others waited: again, behind them
                    b.reopen()
                    b.lock_rank, b.ticket = YIELDED, new_ticket()
        except (WorkerDied, ProtocolViolation) as e:
            violation = b.cand.handle.violation() if b.cand is not None else None
            if violation and violation.startswith("build tier quota"):  # the late order would write as much
                state["error"] = Reject(Status.REJECTED, rules.RESOURCES, f"resource limit: {violation}")
            elif isinstance(e, CallTimeout):  # its first calls' budget is the judgement's: the verdict
                state["error"] = e
            else:
                state["ok"] = False
                j.v.evidence["warm_apart_failed"] = f"{type(e).__name__}: {e}"[:300]
        except BaseException as e:  # noqa: BLE001 - the verdict (a Reject) or an error: raised below
            state["error"] = e
        finally:
            b.close()

    try:
        beside(j, "warm-apart worker", apart)
    finally:
        j.v.durations_s["warm_apart"] = round(time.monotonic() - t, 3)
        j.v.durations_s["compile"] = b.v.durations_s.get("compile", 0.0)
        j.v.evidence["build"] = b.v.evidence.get("build", {})
        j.v.evidence["warm_apart_exclusive_s"] = b.v.durations_s.get("exclusive")
        j.deadline = max(j.deadline, b.deadline)  # its waits for the device are not the candidate's time
        for w in (j.ref, j.cand):
            if w is not None:
                w.deadline = max(w.deadline, j.deadline)
    if "error" in state:
        raise state["error"]  # type: ignore[misc]
    # what it wrote (JIT caches, and anything else) stays in the judgement's working copy of the
    # tier, read-only to the judging workers, and goes with the judgement: it made calls, so nothing
    # of it is kept for a later judgement (sandbox/build/tiers.py)
    if not state["ok"]:
        j.reopen()  # the late order starts its own workers (build dir writable)
    return bool(state["ok"])


def beside(j: Judging, what: str, work: Callable[[], None]) -> None:
    """Run ``work`` (the build or warm-apart worker's whole life) in a thread of its own, since a
    worker dies with the thread that started it (PR_SET_PDEATHSIG), while this thread starts the
    judging workers (the Python, torch and CUDA start-up of two processes). Nothing of the candidate
    runs in them until ``work`` is done; they mount the working copy of the tier read-only, so what
    ``work`` writes there they load. Returns when both are done.

    Interrupted (Ctrl-C in a serial run's main thread, while the judging workers start or while
    this thread waits), the work is given up: its workers are killed (sandbox/worker/threadworkers.py),
    so the wait for its thread is short, and the interrupt goes on up. Before, the wait lasted the
    whole build: a compile at build niceness on a loaded machine kept a stopped run to the
    evaluation's 600 s bound (CI, 2026-11-28)."""
    import threading

    from sandbox.worker import threadworkers

    th = threading.Thread(target=work, name=f"{threading.current_thread().name}-{what.split()[0]}", daemon=True)
    th.start()
    try:
        early_start(j, what)
        join_seeing_signals(th)
    except BaseException:
        threadworkers.stop(th)
        th.join(STOPPED_JOIN_S)  # a worker being started when it was stopped is refused as it starts
        raise


def join_seeing_signals(th: threading.Thread, step_s: float = 0.25) -> None:
    """``th.join()`` in steps, so that a Ctrl-C is raised here even when the kernel delivered the
    signal to ``th`` (any thread of the process can take it): an untimed join is woken only by a
    signal to this thread, and Python runs its handlers only in the main thread. Seen in CI
    (2026-11-28): a stopped demo run waited 600 s in ``beside``'s join while its build thread, which
    had taken the SIGINT, was blocked."""
    while th.is_alive():
        th.join(step_s)


def early_start(j: Judging, what: str) -> None:
    """Start the judging workers for the sealed import (cache read-only) while the build or
    warm-apart worker (``what``) runs. A start that fails is left to open_and_warm, which
    starts them again and reports it."""
    try:
        j.start(cache_ro=True)
        j.v.evidence["judging_workers_started_beside"] = what
    except Exception:  # noqa: BLE001
        j.reopen()


def open_and_warm(j: Judging, order: str, profile: str, extras: list[str]) -> None:
    """Start the judging workers, import the candidate, take the device and make the warm-up
    calls. Sealed before the import in the "sealed" and "warm-apart" orders (builds and JIT
    caches mounted read-only), after the warm-up in the "late" order."""
    sealed_first = order in ("sealed", "warm-apart")
    if j.cand is None:  # not already started beside the warm-apart worker (early_start)
        j.start(cache_ro=sealed_first)
    if sealed_first:  # no process may start from here on, not even during the import
        prewarm = ["triton"] if order == "warm-apart" and "triton" in j.source else []
        rep, _ = j.cand.request("seal", bound=j.call_bound(floor=60.0), prewarm=prewarm)
        j.v.evidence["build_apart"]["sealed_before_import"] = bool(rep.get("sealed"))
        if prewarm:
            j.v.evidence["build_apart"]["prewarm"] = rep.get("prewarm", {})
    j.phase = "import"
    j.import_candidate()  # compiles only in the "late" order: no device lock held yet
    j.phase = "warm"
    j.presetup(profile)  # on a GPU, the warm-up's first models, built before the device is held
    j._take_device()
    t = time.monotonic()
    j.warm(profile, extras)
    j.phase = "judge"  # from here a setup is bounded by the warm-up's (Judge.setup)
    j.v.durations_s["warm"] = round(time.monotonic() - t, 3)  # first calls: outside the GPU-held bound


def warm_in_order(j: Judging, order: str, why: str, profile: str, extras: list[str]) -> None:
    """open_and_warm in ``order``, falling back when a sealed judging worker's warm-up calls
    (its import went through) fail with a runtime or compile error: "sealed" -> "warm-apart"
    (a build or tool at the first call, which the build worker's import never reached) ->
    "late". A candidate that fails the same way unsealed gets that failure as its verdict
    (from the warm-apart worker or the late order). A failure at import stays the verdict:
    the build worker imported the same source unsealed, so what fails there sealed is what
    the candidate does at import after its build (a fork bomb, say), not a build."""
    from sandbox.lane.devicelock import YIELDED, ticket
    from sandbox.lane.firstcall import LaneYield

    failures: list[str] = []
    while True:
        j.v.evidence["build_apart"] = {"order": order, "why": why,
                                       **({"sealed_failures": failures} if failures else {})}
        try:
            open_and_warm(j, order, profile, extras)
            return
        except LaneYield:  # its GPU work held the device while others waited: the same order again, behind them
            j.reopen()
            j.lock_rank, j.ticket = YIELDED, ticket()
            continue
        except Reject as r:
            if order == "late" or j.phase != "warm" or r.status not in (Status.RUNTIME_ERROR, Status.COMPILE_ERROR):
                raise
            failures.append(f"{order}: {r.status.value}: {r.message}: {str(r.evidence.get('log', ''))[-300:]}"[:600])
        j.reopen()
        if order == "sealed" and warm_apart(j, profile, extras):
            order, why = "warm-apart", ("the sealed warm-up failed (a build or a tool at the first call, which the "
                                        "build worker never makes): a separate worker made the first calls")
        else:
            order, why = "late", "the sealed warm-up failed where an unsealed one succeeded; judged in the late order"
