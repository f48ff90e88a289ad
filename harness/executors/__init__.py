"""Executors: how the runner gets candidates judged (issue 8, docs/performance.md).

``serial`` judges each candidate in the calling thread (the evaluator as is). ``local`` runs a
pool of sandboxed compile workers ahead of one timing worker per GPU on this machine. ``ray``
schedules the same units of work (build, then judge) as Ray tasks on a cluster.
"""

from __future__ import annotations

from harness.executors.base import Executor, ExecutorStats
from harness.executors.registry import EXECUTORS, make_executor

__all__ = ["EXECUTORS", "Executor", "ExecutorStats", "make_executor"]
