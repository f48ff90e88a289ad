"""Reference workers started before the judgements that take them.

A judgement's reference worker imports torch and, when the compile baseline is timed, torch.compile's
own modules before its hello (sandbox/check/refcache.py ``preload``): on one H200 beside a batch's
builds that took 10-17 s, against 3-5 s for the candidate's worker and 5-7 s for a build worker's
cache hit, so it was the longest step before every judgement's import (session 32, call 2:
``evidence.worker_start_s``). An executor that knows more judgements are coming starts their
reference workers ahead (``start`` then ``put``, harness/executors/local.py); ``Judge.start`` takes
one whose settings match (``take``) and starts its own otherwise.

Nothing is shared between judgements: a spare is a fresh worker that has run nothing but its own
start-up (the reference role never runs candidate code), and one judgement takes it and closes it.
What a judgement gives its reference worker at launch that depends on the task (its reference
cache's entry) is given when it is taken (``WorkerSession.adopt``). A spare older than
``MAX_AGE_S`` is closed instead of taken (a container's wall backstop counts from its start).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox.config import EvalConfig
    from sandbox.worker.session import WorkerSession

MAX_AGE_S = 300.0
_lock = threading.Lock()
_pool: dict[tuple[Any, ...], list[tuple[float, WorkerSession]]] = {}
_stats = {"started": 0, "taken": 0, "expired": 0, "closed": 0}


def preload_for(cfg: EvalConfig) -> bool:
    """Does a judgement under ``cfg`` time torch.compile's baseline (its reference worker preloads
    torch.compile's modules: sandbox/judge.py ``baseline_compile``)."""
    from sandbox.verdict import Mode

    return cfg.mode is Mode.FINAL and "compile" in cfg.baselines


def key(cfg: EvalConfig, preload: bool) -> tuple[Any, ...]:
    """What a reference worker's launch depends on, apart from the task: the jail, the device, the
    compile preload and the limits."""
    from sandbox.worker.judgeenv import worker_limits

    return (cfg.sandbox, bool(cfg.unsafe_no_isolation), cfg.device, bool(preload), worker_limits(cfg)[0])


def start(cfg: EvalConfig, preload: bool) -> WorkerSession:
    """Launch a reference worker for a later judgement under ``cfg`` (not connected: its hello
    waits in its channel). Call from a thread that outlives it (PR_SET_PDEATHSIG)."""
    from sandbox.isolation import get_launcher
    from sandbox.worker.judgeenv import worker_limits
    from sandbox.worker.session import WorkerSession

    limits, _ = worker_limits(cfg)
    w = WorkerSession("reference", get_launcher(cfg.sandbox, unsafe=cfg.unsafe_no_isolation), cfg.device, None,
                      time.monotonic() + MAX_AGE_S + cfg.timeout_s, limits, preload=preload, inductor=True)
    with _lock:
        _stats["started"] += 1
    return w


def put(k: tuple[Any, ...], w: WorkerSession) -> None:
    with _lock:
        _pool.setdefault(k, []).append((time.monotonic(), w))


def take(k: tuple[Any, ...]) -> WorkerSession | None:
    """The oldest spare for ``k`` that is still young enough and alive, or None."""
    stale: list[WorkerSession] = []
    got = None
    with _lock:
        spares = _pool.get(k, [])
        while spares and got is None:
            born, w = spares.pop(0)
            if time.monotonic() - born > MAX_AGE_S or w.handle.poll() is not None:
                stale.append(w)
                _stats["expired"] += 1
            else:
                got = w
                _stats["taken"] += 1
    for w in stale:
        w.close()
    return got


def count(k: tuple[Any, ...]) -> int:
    with _lock:
        return len(_pool.get(k, []))


def close(keys: list[tuple[Any, ...]] | None = None) -> int:
    """Close the spares (of ``keys``, or all); how many."""
    with _lock:
        ks = [k for k in _pool if keys is None or k in keys]
        gone = [w for k in ks for _, w in _pool.pop(k)]
        _stats["closed"] += len(gone)
    for w in gone:
        w.close()
    return len(gone)


def stats() -> dict[str, int]:
    with _lock:
        return dict(_stats)
