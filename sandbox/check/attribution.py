"""Who is to blame when the reference fails during a judgement (EVAL_RULES #25).

A candidate that could kill, stall or corrupt the reference worker would turn its own verdict
into "your reference is broken". So a reference failure while a candidate is judged is never
taken at its word: once the candidate's workers are gone, the reference runs alone in a fresh
worker (same task, profile and seeds). Healthy alone: the candidate interfered, and the verdict
is ``rejected sandbox.interference``. Failing alone too: the task is broken (``TaskError``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from sandbox import rules
from sandbox.intake.task import TaskError
from sandbox.isolation import Limits, get_launcher
from sandbox.lane.devicelock import device_lock
from sandbox.verdict import Status
from sandbox.worker.arena import Arena
from sandbox.worker.session import WorkerDied, WorkerSession

if TYPE_CHECKING:
    from sandbox.config import EvalConfig
    from sandbox.intake.task import Task
    from sandbox.verdict import Verdict


class Judging(Protocol):
    """What blaming uses of the judgement in progress (sandbox/judge.py's ``Judge`` has it): the task,
    the config, the verdict to write and the seeds of the failed trial."""

    v: Verdict
    task: Task
    cfg: EvalConfig
    final: bool
    base_seed: int
    init_seed: int

    def overrides(self, profile: str) -> dict[str, Any]: ...


ALONE_TIMEOUT_S = 180.0
ALONE_CALLS = 2


def reference_alone(j: Judging) -> str | None:
    """Run the reference by itself; None when it is healthy, else what went wrong."""
    cfg = j.cfg
    deadline = time.monotonic() + min(ALONE_TIMEOUT_S, max(60.0, cfg.timeout_s))
    limits = Limits(rss_bytes=None, wall_seconds=ALONE_TIMEOUT_S)
    lock = device_lock(cfg.device)
    w = None
    arena = Arena()  # the reference's own call inputs travel through it, as in a judgement
    with lock:
        try:
            w = WorkerSession("reference", get_launcher(cfg.sandbox, unsafe=cfg.unsafe_no_isolation), cfg.device,
                              None, deadline, limits)
            w.connect()
            w.attach_arena(arena, ("ref_in",))
            if cfg.device.startswith("cuda"):
                rep, _ = w.request("warm_device")
                if not rep.get("ok"):
                    return f"GPU warm-up: {rep.get('error', '')[:500]}"
            compiled = j.final and "compile" in cfg.baselines  # the same work the judgement asked of it
            rep, _ = w.request("setup", task_source=j.task.source, task_path=str(j.task.path),
                               overrides=j.overrides(cfg.profile), init_seed=j.init_seed, compile=compiled)
            if not rep.get("ok"):
                return f"setup: {rep.get('error', '')[-1500:]}"
            for target in ("eager", "compile") if compiled else ("eager",):
                for i in range(ALONE_CALLS):
                    rep, _ = w.request("call", seed=j.base_seed + i, target=target)
                    if not rep.get("ok"):
                        return f"{target} call: {rep.get('error', '')[-1500:]}"
            return None
        except (WorkerDied, OSError, RuntimeError) as e:
            return f"{type(e).__name__}: {e}"[:800]
        finally:
            if w is not None:
                w.close()
            arena.close()


def attribute(j: Judging, failure: str) -> None:
    """Set the verdict for a reference ``failure`` seen during the judgement, or raise TaskError."""
    t = time.monotonic()
    alone = reference_alone(j)
    j.v.durations_s["reference_alone"] = round(time.monotonic() - t, 3)
    if alone is not None:
        raise TaskError(f"{failure}\n(the reference also fails when run alone: {alone})")
    j.v.status, j.v.rule = Status.REJECTED, rules.INTERFERENCE
    j.v.message = ("the reference worker failed while this candidate was being judged, and runs "
                   f"cleanly alone: the candidate interfered with it ({failure[-1200:]})")
    j.v.timings, j.v.speedups = {}, {}
