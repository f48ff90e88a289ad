"""One judgement at a time on each device, within one harness process.

A judgement holds its device's lock from the moment its two workers are up (before the
candidate is imported: import-time code may already use the GPU) until both workers are gone,
so no other candidate's code, reference or timing runs on that device meanwhile. What is left
outside the lock is only trusted work that launches no GPU kernel: starting the workers
(Python, torch, the CUDA context, allocations, the profiler's set-up). The warm-up's kernels
run after the lock is taken (``warm_device``): a kernel from another process's context would
time-slice the GPU under the current judgement's timed calls. An executor with two judging
threads per device therefore overlaps the next judgement's start-up with the current one's
checks and timing, and timings stay exclusive.

CPU judgements take the ``cpu`` lock for the same reason: host timers measure the same cores.
"""

from __future__ import annotations

import threading

_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def key(device: str) -> str:
    """'cuda' and 'cuda:0' are the same device; every CPU device is 'cpu'."""
    if device.startswith("cuda"):
        return device if ":" in device else "cuda:0"
    return "cpu"


def device_lock(device: str) -> threading.Lock:
    with _GUARD:
        return _LOCKS.setdefault(key(device), threading.Lock())
