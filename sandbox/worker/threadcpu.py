"""Each of the judging worker's threads' CPU, read by thread id (the Linux per-thread CPU clock),
for the check window's evidence (sandbox/worker/callpath.py ``bg_report``, sandbox/check/calls.py
``check_window``): which threads burnt CPU between a call's end and its output's check, and how much
of it was the worker's own threads' (those alive before any candidate code: kineto's config
loader, a CUDA driver's). The aliases are captured when the worker starts, before any candidate
code; this module's functions are in the monitors' identity snapshot (sandbox/rules/monitors.py).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

_listdir = os.listdir
_clock_ns, _native_id, _open = time.clock_gettime_ns, threading.get_native_id, open


def threads_ns() -> dict[int, int]:
    """CPU ns so far of each of this process's threads but the caller (the Linux per-thread CPU
    clock, read by thread id; a thread that ended meanwhile is left out)."""
    me, out = _native_id(), {}
    try:
        tids = _listdir("/proc/self/task")
    except OSError:
        return out
    for t in tids:
        tid = int(t)
        if tid != me:
            try:
                out[tid] = _clock_ns(((~tid) << 3) | 6)  # CPUCLOCK_SCHED of thread tid
            except OSError:
                pass
    return out


def others_by_thread(mark: dict[int, int] | None, own: frozenset[int], top: int = 3) -> dict[str, Any]:
    """Since ``mark`` (``threads_ns``): the CPU of the worker's own threads (``own``: those that
    existed before any candidate code, e.g. kineto's config loader) and the busiest other threads
    as [name/tid, us] (evidence for sandbox/check/calls.py ``check_window``)."""
    try:
        return _by_thread(mark, own, top) if mark is not None else {}
    except Exception:  # noqa: BLE001 - evidence only; never the reason a check is skipped
        return {}


def _by_thread(mark: dict[int, int], own: frozenset[int], top: int) -> dict[str, Any]:
    now = threads_ns()
    d = sorted(((ns - mark.get(tid, 0), tid) for tid, ns in now.items()), reverse=True)
    busiest = []
    for ns, tid in d[:top]:
        if ns <= 0:
            break
        try:
            with _open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            name = "?"
        tag = " (worker's own)" if tid in own else ("" if tid in mark else " (new)")
        busiest.append([f"{name}/{tid}{tag}", round(ns / 1e3, 1)])
    return {"own_ns": sum(ns for ns, tid in d if tid in own and ns > 0), "busiest": busiest}
