"""Which unit a judging thread of the local pipeline (harness/executors/local.py) takes next: the
gates a batch's task check opens task by task (``hold_judging``), the earliest-submitted ready
unit whose gate is open, and, on an idle GPU, a unit whose build has not started."""

from __future__ import annotations

import dataclasses
import heapq
import threading
from typing import Any

from sandbox.contract import EvalConfig, Task


class LaneChoice:
    """Mixed into LocalExecutor, which sets ``_cv``, ``_ready`` (a heap of units), ``_to_build`` (a
    heap of (build class, seq, unit)), ``_running``, ``_open_all``, ``_open`` and
    ``_take_unbuilt_ok``, and ``devices``. Every method but ``gate``, ``open_judging``, ``opened`` and
    ``lane_config`` runs under ``_cv``."""

    _cv: threading.Condition
    _ready: list[Any]
    _to_build: list[tuple[int, int, Any]]
    _running: dict[str, int]
    _open_all: bool
    _open: set[Any]
    _take_unbuilt_ok: bool
    devices: list[str]

    @staticmethod
    def gate(task: Task, config: EvalConfig) -> tuple[Any, str]:
        """What ``open_judging`` opens for a unit: its task (by source) at its profile."""
        return getattr(task, "sha256", None) or getattr(task, "name", ""), config.profile

    def open_judging(self, gate: tuple[Any, str] | None = None) -> None:
        """Let the timing threads take the units of ``gate`` (``gate(task, config)``), or every
        unit (None). An executor made with ``hold_judging=True`` builds while a batch's task check
        runs and judges a unit only once its task passed: a batch's first verdict waits for its
        own task's check, not for all of them (203 s for 63 KernelBench tasks on an H200)."""
        with self._cv:
            if gate is None:
                self._open_all = True
            else:
                self._open.add(gate)
            self._cv.notify_all()

    def opened(self, task: Task, config: EvalConfig) -> bool:
        """Are units of this task and config judged now (not held)."""
        with self._cv:
            return self._open_all or self.gate(task, config) in self._open

    def lane_config(self, config: EvalConfig, device: str) -> EvalConfig:
        """The config a judgement of ``config`` on the lane ``device`` runs with (its own GPU when
        there are several)."""
        if config.device.startswith("cuda") and len(self.devices) > 1 and device.startswith("cuda"):
            return dataclasses.replace(config, device=device)
        return config

    def _judgeable(self, unit: Any) -> bool:
        return self._open_all or unit.gate in self._open

    def _pop_ready(self) -> Any | None:
        """The earliest-submitted ready unit whose gate is open (under ``_cv``)."""
        if self._open_all:
            return heapq.heappop(self._ready) if self._ready else None
        ok = [i for i, u in enumerate(self._ready) if self._judgeable(u)]
        if not ok:
            return None
        k = min(ok, key=lambda i: self._ready[i].seq)
        unit = self._ready.pop(k)
        heapq.heapify(self._ready)
        return unit

    def _can_take_unbuilt(self, device: str) -> bool:
        """A GPU with no judgement in flight and nothing ready takes a unit whose build has not
        started, rather than idle until the compile pool finishes one: its judgement builds it beside
        its workers' start (sandbox/build/buildphase.py, the order ``harness eval`` uses), so the
        workers' ~10-15 s start-up overlaps the build instead of following it. On two H200s a
        batch's first verdict came 32 s after submission with every build cached (session 30), the
        prebuild's worker start and the judgement's, one after the other. On a GPU only (a CPU
        lane's judgement would compile beside the other lanes' host timers)."""
        return (self._take_unbuilt_ok and device.startswith("cuda") and not self._running[device]
                and any(self._judgeable(u) for _, _, u in self._to_build))

    def _take_unbuilt(self) -> Any | None:
        """The earliest-submitted unit, its gate open, whose build has not started (under ``_cv``)."""
        ok = [i for i, (_, _, u) in enumerate(self._to_build) if self._judgeable(u)]
        if not ok:
            return None
        k = min(ok, key=lambda i: self._to_build[i][1])
        _, _, unit = self._to_build.pop(k)
        heapq.heapify(self._to_build)
        unit.unbuilt = True
        return unit
