"""The executor contract (``Executor``) and the counters every executor keeps.

An executor judges ``(task, source, EvalConfig)`` units and may run many at once:
``submit`` returns a ``concurrent.futures.Future`` of the ``Verdict`` (or of the exception
``sandbox.evaluate.evaluate`` would raise: ``CandidateError``, ``TaskError``), ``judge`` blocks
on it (it has the runner's ``JudgeFn`` signature), ``close`` stops the workers.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from sandbox.contract import (
    EvalConfig,
    Task,
    Verdict,
    gpu_memory_bytes,
    judgement_gpu_bytes,
    machine_slots,
)

# how a candidate gets judged: sandbox.evaluate.evaluate, an executor's judge, or a test's fake
JudgeFn = Callable[[Task, str, EvalConfig], Verdict]


@dataclass
class ExecutorStats:
    """Counters an executor keeps (thread-safe through ``lock``)."""

    submitted: int = 0
    judged: int = 0  # units that took a timing slot
    built: int = 0  # prebuilds that finished with the extension in the cache
    compile_errors: int = 0  # short-circuited by the build worker (no timing slot)
    not_built: int = 0  # prebuild left the decision to the judge
    built_before: int = 0  # no prebuild: an earlier run built the source into the cache (the judge's build step finds it)
    build_compile_s: list[float] = field(default_factory=list)  # compile time per prebuild that compiled
    build_wall_s: list[float] = field(default_factory=list)
    busy_s: float = 0.0  # time timing workers spent judging, summed over workers
    slot_wait_s: float = 0.0  # time judging threads waited for a machine-wide slot (sandbox/lane/slots.py)
    first_submit: float | None = None
    last_done: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def mark_submit(self) -> None:
        with self.lock:
            self.submitted += 1
            if self.first_submit is None:
                self.first_submit = time.monotonic()

    def mark_done(self) -> None:
        with self.lock:
            self.last_done = time.monotonic()

    def summary(self, timing_slots: int = 1) -> dict[str, Any]:
        wall = (self.last_done or 0.0) - (self.first_submit or 0.0)
        done = self.judged + self.compile_errors
        return {
            "submitted": self.submitted, "judged": self.judged, "built": self.built,
            "compile_errors": self.compile_errors, "not_built": self.not_built, "built_before": self.built_before,
            "wall_s": round(wall, 3),
            "candidates_per_min": round(60.0 * done / wall, 2) if wall > 0 else None,
            "busy_fraction": round(self.busy_s / (wall * timing_slots), 3) if wall > 0 else None,
            "median_compile_s": round(statistics.median(self.build_compile_s), 2) if self.build_compile_s else None,
            "busy_s_per_judgement": round(self.busy_s / self.judged, 3) if self.judged else 0.0,
            "slot_wait_s": round(self.slot_wait_s, 3),
        }


class Executor(Protocol):
    name: str
    stats: ExecutorStats

    def submit(self, task: Task, source: str, config: EvalConfig) -> Future[Verdict]: ...

    def judge(self, task: Task, source: str, config: EvalConfig) -> Verdict: ...

    def close(self) -> None: ...


def abandon(executor: object) -> None:
    """A run or batch stopped by a signal: the executor gives up its builds in flight instead of
    letting ``close`` wait for them (``LocalExecutor.abandon``, ``RayExecutor.abandon``). Judgements
    in flight still finish. An executor without ``abandon`` (serial) is left as it is."""
    fn = getattr(executor, "abandon", None)
    if fn is not None:
        fn()


class GpuWeights:
    """How many of a GPU's ``slots`` judging slots one judgement takes: its GPU memory
    (``judgement_gpu_bytes``: both workers' data, the device arena, the contexts) over the GPU's
    (``gpu_memory_bytes``), rounded up (sandbox/lane/slots.py ``weight_for``); 1 off a GPU or when
    either is unknown. Per task and config, computed once (the estimate runs the model on torch's
    meta device). The Ray executor asks for that share of a GPU; the local executor's slots weigh
    one, since the judge reserves its memory itself (sandbox/lane/gpumem.py)."""

    def __init__(self) -> None:
        self._w: dict[tuple[Any, ...], int] = {}
        self._gpu: int | None = None

    def __call__(self, task: Task, config: EvalConfig, slots: int) -> int:
        if not str(config.device).startswith("cuda"):
            return 1
        key = (getattr(task, "source", None), config.profile, str(config.mode), config.device, slots)
        w = self._w.get(key)
        if w is None:
            try:
                need = judgement_gpu_bytes(task, config)
            except Exception:  # noqa: BLE001 - best effort: the judge finds out itself
                need = None
            if self._gpu is None:
                self._gpu = gpu_memory_bytes() or 0
            w = self._w[key] = machine_slots.weight_for(need, self._gpu, slots)
        return w

