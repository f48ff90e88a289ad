"""The workers each thread started, so that one thread's work can be given up at once.

A worker dies with the thread that started it (PR_SET_PDEATHSIG). So a judgement runs its build and
warm-apart workers in a thread of their own (sandbox/build/buildphase.py: ``beside``), and the local
executor runs its builds in builder threads. When a run stops (Ctrl-C, SIGTERM), the thread that
waits for such a thread used to wait for its whole build. A compile at build niceness on a loaded
machine ran to the evaluation's 600 s bound: the demo, stopped with Ctrl-C in CI, did not exit
(2026-11-28).

``stop(thread)`` kills every worker that ``thread`` started and still has, and any it starts
afterwards (``WorkerSession`` raises ``WorkerDied`` at once). The thread's requests then fail with
``WorkerDied``, it ends, and the wait for it is short. Threads are held weakly, by the object (not
by the ident, which a later thread may reuse): a mark goes with its thread.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

_lock = threading.Lock()
_live: weakref.WeakKeyDictionary[threading.Thread, dict[int, Any]] = weakref.WeakKeyDictionary()
_stopped: weakref.WeakSet[threading.Thread] = weakref.WeakSet()  # threads whose work was given up


def started(handle: Any) -> bool:
    """Record a worker the calling thread has just started. False when that thread's work was given up.
    The worker is then killed here, and the caller raises."""
    me = threading.current_thread()
    with _lock:
        if me not in _stopped:
            _live.setdefault(me, {})[id(handle)] = handle
            return True
    _kill(handle)
    return False


def ended(handle: Any) -> None:
    """The worker is gone (its session closed): nothing of it to kill any more."""
    with _lock:
        for handles in _live.values():
            handles.pop(id(handle), None)


def stop(thread: threading.Thread) -> int:
    """Give up ``thread``'s work: kill the workers it has, and refuse the ones it starts from now on.
    Returns how many were killed. Safe from any thread, but not from a signal handler (it takes a lock)."""
    with _lock:
        _stopped.add(thread)
        handles = list(_live.pop(thread, {}).values())
    for h in handles:
        _kill(h)
    return len(handles)


def _kill(handle: Any) -> None:
    try:
        handle.kill()
    except Exception:  # noqa: BLE001 - a worker that just ended by itself
        pass
