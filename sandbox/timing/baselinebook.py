"""Baseline timings kept across the judgements of one op on one device (issue 16, item 1).

Every candidate of an op is timed against its baselines (eager, torch.compile) interleaved
call by call, for as long as the candidate itself: the same numbers again for every candidate
of the op. (Measured on the H100, session 9: for a CUDA relu the timed baseline calls cost
about 1 ms each, so the book saved little there; it pays for ops whose baselines run to the
timing cap. Opt-in: ``EvalConfig.reuse_baselines``.) The book keeps a valid judgement's baseline samples, per (task source, device, GPU, profile,
baseline), in this process (the pipeline's timing lanes are threads of one process). A later
judgement of the same op then times each booked baseline as a *sentinel*: one block in every
``SENTINEL_EVERY`` rounds, interleaved with the candidate as before, at least ``MIN_FRESH``
calls. When the fresh median is within ``DRIFT`` of the book's, the baseline's measurement is
the book's samples plus the fresh ones; otherwise the fresh samples alone (they were taken
beside the candidate, so the comparison stays fair, with a wider interval), and the entry is
dropped so that the next judgement times the baseline in full and books it again. The verdict
says which happened (evidence ``baseline_book``).

What is booked comes only from judgements that ended valid (a rejected candidate may have
slowed the baselines on purpose); what a booked entry could still carry (a valid candidate
that slowed the baselines by less than its rules catch) is bounded by the sentinel's drift
check in every later judgement.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import numpy as np

SENTINEL_EVERY = 3  # a booked baseline runs one block in this many rounds
MIN_FRESH = 10  # fresh calls of a booked baseline in every judgement, at least
MIN_BOOK = 20  # samples a judgement must have taken in full to book its baseline (timing.MIN_SAMPLES)
DRIFT = 0.05  # |fresh median / booked median - 1| above this: the book is not used
MAX_BOOK = 2000  # samples kept per entry (the latest)

_lock = threading.Lock()
_book: dict[tuple[str, ...], list[float]] = {}


def key(task_source: str, device: str, gpu: str | None, profile: str, baseline: str) -> tuple[str, ...]:
    return (hashlib.sha256(task_source.encode()).hexdigest(), device, gpu or "", profile, baseline)


def get(k: tuple[str, ...]) -> list[float] | None:
    with _lock:
        s = _book.get(k)
        return list(s) if s else None


def put(k: tuple[str, ...], samples: list[float]) -> bool:
    if len(samples) < MIN_BOOK:
        return False
    with _lock:
        _book[k] = list(samples[-MAX_BOOK:])
    return True


def drop(k: tuple[str, ...]) -> None:
    with _lock:
        _book.pop(k, None)


def clear() -> None:
    with _lock:
        _book.clear()


def pool(booked: list[float], fresh: list[float]) -> tuple[list[float], dict[str, Any]]:
    """(the samples the baseline's measurement uses, evidence): the book's and the fresh ones
    when their medians agree within DRIFT, else the fresh ones alone."""
    bm, fm = float(np.median(booked)), float(np.median(fresh))
    drift = fm / bm - 1.0 if bm > 0 else float("inf")
    used = abs(drift) <= DRIFT
    ev = {"reused": used, "book_n": len(booked), "fresh_n": len(fresh), "book_median_us": round(bm, 3),
          "fresh_median_us": round(fm, 3), "drift": round(drift, 4), "allowed_drift": DRIFT}
    return (list(booked) + list(fresh) if used else list(fresh)), ev
