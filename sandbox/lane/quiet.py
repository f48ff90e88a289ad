"""Quiet rounds: the background build workers stopped while a judgement re-measures.

A timing check that fires in its first round (the wall-clock tail and parent-clock checks,
sandbox/timing/wallclock.py; the background-CPU check, sandbox/timing/measure.py) is confirmed by a second
round before it rejects. On the H100 with fifteen builds running beside the lanes (at
SCHED_IDLE, nice 19), two honest ReLU variants of sixty failed the confirmation as well and were
valid every time when judged alone (docs/performance.md, tenth session). The builds' load is
not CPU time (they only get what no judgement wants) but shared caches, memory bandwidth and
SMT siblings. So the confirmation round runs with every build worker of this process stopped,
the way the output checks stop the candidate (SIGSTOP of the whole tree): a second or so of
build time, on the rare judgement whose first round fired.

Build workers register their handles (sandbox/build/prebuild.py); rounds of several lanes may
overlap: the builds stay stopped until the last round ends, and a build that starts meanwhile
is stopped as it registers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_handles: dict[int, Any] = {}  # id(handle) -> handle
_tokens: dict[int, Any] = {}  # id(handle) -> its freeze token, while a round is on
_depth = 0


def _freeze(h: Any) -> Any:
    fn = getattr(h, "freeze", None)
    try:
        return fn() if fn is not None else None
    except Exception:  # noqa: BLE001 - a build that just ended
        return None


def _thaw(h: Any, token: Any) -> None:
    if token is not None:
        try:
            h.thaw(token)
        except Exception:  # noqa: BLE001
            pass


def register(handle: Any) -> None:
    with _lock:
        _handles[id(handle)] = handle
        if _depth > 0:
            _tokens[id(handle)] = _freeze(handle)


def registered() -> list[Any]:
    """The build workers' handles registered now (tests freeze one to hold a build still)."""
    with _lock:
        return list(_handles.values())


def unregister(handle: Any) -> None:
    with _lock:
        _handles.pop(id(handle), None)
        token = _tokens.pop(id(handle), None)
    _thaw(handle, token)  # never leave a tree stopped behind a build that is being closed


@contextmanager
def builds_stopped() -> Iterator[int]:
    """Stop every registered build worker's tree for the body; yields how many are stopped."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            for k, h in _handles.items():
                _tokens[k] = _freeze(h)
        n = sum(t is not None for t in _tokens.values())
    try:
        yield n
    finally:
        held: dict[int, Any] = {}
        tokens: dict[int, Any] = {}
        with _lock:
            _depth -= 1
            if _depth == 0:  # the last round ends: every tree stopped for the rounds goes on
                held, tokens = dict(_handles), dict(_tokens)
                _tokens.clear()
        for k, token in tokens.items():
            if k in held:
                _thaw(held[k], token)
