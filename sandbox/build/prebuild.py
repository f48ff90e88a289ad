"""Build a candidate ahead of judging, in the same isolated worker the judge uses.

``prebuild(task, source, config)`` starts one sandboxed ``candidate`` worker (same launcher,
scrubbed environment and monitors as ``sandbox/judge.py``), asks it to ``import`` the
candidate (``load_inline`` builds land in a working copy of the candidate's tier of the
content-addressed build cache, sandbox/build/buildcache.py and sandbox/build/tiers.py) and to ``setup``
(constructs ``ModelNew``, which catches builds done in ``__init__``), and never calls ``forward``.
On "built" the parent keeps the new build entries in the tier (sealed). It runs on device
``cpu``: compiling needs no GPU.

Outcomes: ``built`` (the judge will hit the cache), ``compile_error`` (with the verdict the
judge would give, so the executor can skip the timing slot), ``not_built`` (anything else: a
static-scan rejection, an import or setup failure, a timeout; the judge decides those itself).

With ``KH_BUILD_PCH=1`` the parent first builds the precompiled headers the candidate's C++
builds can use (sandbox/build/pch.py); the worker sees them read-only.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sandbox.build import pch
from sandbox.config import EvalConfig
from sandbox.errors import CandidateError
from sandbox.lane import quiet
from sandbox.verdict import Status, Verdict

if TYPE_CHECKING:
    from pathlib import Path

    from sandbox.build.tiers import WorkTier
    from sandbox.intake.task import Task

BUILD_NICENESS = 19  # build workers take only CPU time that judgements leave
MEMO_S = 3600.0  # how long a build worker's "built" stands in for the judge's own (issue 16)

# (source, task, cache root, device kind, profile, sandbox, hidden paths) -> when a build worker of
# this process finished with "built": the judge's own build step (sandbox/build/buildphase.py) then
# skips its build worker, which on the H100 took 9-12 s per judgement for a cache hit (a worker
# start, torch's import, the extension's load). Taken once: the pipeline builds, then judges.
_built: dict[tuple[str, ...], float] = {}
_built_lock = threading.Lock()


def _memo_key(task: Task, source: str, config: EvalConfig) -> tuple[str, ...]:
    from sandbox.worker.judgeenv import cache_root

    h = lambda x: hashlib.sha256(x.encode()).hexdigest()  # noqa: E731
    return (h(source), h(task.source), cache_root(config), str(config.device.startswith("cuda")), config.profile,
            config.sandbox, "\0".join(config.hidden_paths))


def take_built(task: Task, source: str, config: EvalConfig) -> bool:
    """True (once) when a build worker of this process built this source for this judgement's
    settings in the last MEMO_S seconds."""
    with _built_lock:
        t = _built.pop(_memo_key(task, source, config), None)
    return t is not None and time.monotonic() - t < MEMO_S


def built_before(source: str, config: EvalConfig) -> bool:
    """This source was built ("built", promoted into its sealed tier) under ``config``'s cache root
    before, by any process (sandbox/build/tiers.py ``built_before``): its judgement's own build step
    will most likely find every build in the cache."""
    from sandbox.build import buildcache, tiers
    from sandbox.worker.judgeenv import cache_root

    try:
        root = cache_root(config)
        return tiers.built_before(root, buildcache.layout(root, source)[1])
    except (OSError, ValueError):
        return False


@dataclass
class BuildResult:
    outcome: str  # "built" | "compile_error" | "not_built" | "over_quota" (the build tier's quota)
    wall_s: float = 0.0  # worker start to setup done, parent clock
    compile_s: float = 0.0  # time inside the compiler (worker's build-cache wrapper)
    builds: int = 0  # builds run (0 with cache_hits > 0: everything was cached)
    cache_hits: int = 0
    message: str = ""
    verdict: Verdict | None = None  # set for compile_error
    extra: dict[str, Any] = field(default_factory=dict)


def _compile_error_verdict(task: Task, source: str, config: EvalConfig, rep: dict[str, Any],
                           rtt_s: float, isolation: str, t0: float) -> Verdict:
    """The verdict sandbox/judge.py gives a candidate whose import fails to compile."""
    from sandbox.worker.judgeenv import _errors_first, environment

    v = Verdict(status=Status.COMPILE_ERROR, mode=config.mode, device=config.device, task=task.name,
                candidate_sha256=hashlib.sha256(source.encode()).hexdigest(),
                allow_torch_ops=config.allow_torch_ops,
                host_timers=not config.device.startswith("cuda"))
    v.message = "compiling the candidate failed"
    v.environment = environment(config.device, isolation)
    v.durations_s["compile"] = round(float(rep.get("compile_s", 0.0)), 3)
    v.durations_s["import"] = round(rtt_s, 3)
    v.evidence["build"] = {k: rep.get(k) for k in ("builds", "cache_hits", "lite", "lite_fallbacks", "slim", "slim_fallbacks")}
    v.evidence["prebuilt"] = True  # decided by the build worker; no timing slot was used
    if rep.get("error"):
        v.logs = _errors_first(rep["error"])
    v.durations_s["total"] = round(time.monotonic() - t0, 3)
    return v


def prebuild(task: Task | str | Path, source: str, config: EvalConfig | None = None,
             memo: bool = False, tier: WorkTier | None = None) -> BuildResult:
    """Build ``source`` for ``task`` into the build cache; never raises for a bad candidate.
    ``memo``: an executor's build ahead of judging; a "built" outcome lets that judgement skip
    its own build worker (``take_built``). ``tier``: the judgement's working copy of the build
    tier (sandbox/build/tiers.py) the build worker writes; by default one of its own, deleted after.
    A "built" outcome keeps the new build entries in the tier (``WorkTier.promote``); a tier over
    its quota is the outcome ``over_quota`` (the judge's verdict: ``rejected sandbox.resources``)."""
    from sandbox.build import buildcache, tiers
    from sandbox.intake import scan
    from sandbox.intake.candidate import entry_point
    from sandbox.intake.task import Task, load_task
    from sandbox.isolation import Limits, get_launcher
    from sandbox.isolation.process import outer_uid
    from sandbox.worker.judgeenv import cache_root
    from sandbox.worker.session import WorkerDied, WorkerSession

    config = config or EvalConfig()
    if not isinstance(task, Task):
        task = load_task(task)
    t0 = time.monotonic()
    try:
        tree = scan.validate(source, config.candidate_name, task.source)
        hit = scan.scan(tree)
        entry = entry_point(tree, config.candidate_name, task.source).name
    except CandidateError as e:
        return BuildResult("not_built", message=f"input error (the judge reports it): {e}")
    if hit:
        return BuildResult("not_built", message=f"static scan: {hit[0]} (the judge rejects it)")
    cuda = config.device.startswith("cuda")
    # niceness: builds run ahead of judging on the same machine; a judgement's timing, checks and
    # the wall-clock cross-check (rule timing.wall_clock) must not queue behind a compiler
    limits = Limits(address_space_bytes=None if cuda else 16 * 2**30, rss_bytes=16 * 2**30,
                    wall_seconds=config.timeout_s, niceness=BUILD_NICENESS)
    w = None
    own_tier = tier is None
    headers = pch.prepare(source)  # trusted, before the worker: the precompiled headers it can use
    if pch.abandoned():  # the run was stopped while a header was built: no build begins now
        return BuildResult("not_built", message=pch.STOPPED)
    try:
        shared, own, trusted = buildcache.layout(cache_root(config), source)
        if tier is None:
            tier = tiers.WorkTier.open(cache_root(config), own)
        w = WorkerSession("candidate", get_launcher(config.sandbox, unsafe=config.unsafe_no_isolation), "cpu", own,
                          t0 + config.timeout_s, limits, hide=list(config.hidden_paths), shared=[shared, *pch.shared()],
                          uid=outer_uid(own), cuda_build=cuda, tier=tier.path, tier_quota=tier.quota)
        w.connect()
        quiet.register(w.handle)  # stopped while a judgement confirms a timing check (sandbox/lane/quiet.py)
        path = os.path.join(w.scratch, os.path.basename(config.candidate_name) or "candidate.py")
        with open(path, "w") as f:
            f.write(source)
        rep, rtt = w.request("import", candidate_path=path, hidden=list(config.hidden_paths))
        res = BuildResult("built", compile_s=float(rep.get("compile_s", 0.0) or 0.0),
                          builds=int(rep.get("builds") or 0), cache_hits=int(rep.get("cache_hits") or 0),
                          extra={**{k: rep.get(k) for k in ("lite", "lite_fallbacks", "slim", "slim_fallbacks", "pch")},
                                 **({"pch_prepare": headers} if headers.get("built_s") or headers.get("not_built") else {})})
        if not rep.get("ok"):
            if rep.get("kind") == "compile_error":
                res.outcome = "compile_error"
                res.message = "compiling the candidate failed"
                res.verdict = _compile_error_verdict(task, source, config, rep, rtt / 1e9, w.isolation, t0)
            else:
                res.outcome, res.message = "not_built", "importing the candidate failed"
            res.wall_s = time.monotonic() - t0
            return res
        profile = config.profile
        overrides = dict(task.shapes.get(profile, {})) if profile != "default" else {}
        srep, _ = w.request("setup", task_source=task.source, task_path=str(task.path),
                            overrides=overrides, init_seed=0, entry=entry)
        if not srep.get("ok"):
            res.outcome, res.message = "not_built", "ModelNew(*get_init_inputs()) failed in the build worker"
        else:
            w.close()  # nothing writes the tier any more: its new build entries are kept
            tier.promote("build worker")  # recorded in the tier's evidence (verdict: build_tier)
            if memo:
                with _built_lock:
                    _built[_memo_key(task, source, config)] = time.monotonic()
        res.wall_s = time.monotonic() - t0
        return res
    except tiers.TierQuotaExceeded as e:
        return BuildResult("over_quota", wall_s=time.monotonic() - t0, message=f"resource limit: {e}")
    except (WorkerDied, OSError, RuntimeError) as e:  # incl. ProtocolViolation: the judge decides
        violation = w.handle.violation() if w is not None else None
        if violation and violation.startswith("build tier quota"):
            return BuildResult("over_quota", wall_s=time.monotonic() - t0, message=f"resource limit: {violation}")
        return BuildResult("not_built", wall_s=time.monotonic() - t0, message=f"build worker: {e}")
    finally:
        if w is not None:
            quiet.unregister(w.handle)
            w.close()
        if own_tier and tier is not None:
            tier.close()
