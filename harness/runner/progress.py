"""Progress on stderr while a run goes, and the summary table at the end.

While it goes (issue 26, item 6): a line per trial (op, trial, best speedup so far, ETA); a line
when a judgement starts that may build a C++/CUDA extension first (the op's first judgement and
its final one: the long silences of a CPU run) and when one did build (how long, and the run's
builds so far); a line per op done. The ETA is honest or absent: none until an op of this
invocation has finished, then the mean wall time of the ops finished here times the ops left
(minus the time already spent on the ones under way), divided by ``--jobs``: per-op times include
the one-time builds, so the first ops' mean overestimates the rest, never the other way.

At the end: op, valid/total, the final kernel's speedup vs eager with its 95% interval over its
judging sessions, faster / slower / no clear difference, final status; the failed and
interrupted ops' errors in full below it (``op_errors``).
"""

from __future__ import annotations

import threading
import time
from typing import Any, TextIO

from harness.estimate import SpeedupCI
from harness.runner.op import OpResult
from harness.stats import combine_sessions
from harness.statusline import StatusLines

BUILD_NOTE = ("its C++/CUDA extension builds first unless cached (30-90 s a build on 2 cores, more under load; "
              "the machine's first C++ build also makes the precompiled torch header of its flags, about 75 s)")
FINAL_NOTE = "hidden seeds, extra shapes, the full timing protocol (1-2 min on 2 cores)"


class Progress(StatusLines):
    def __init__(
        self, ops: list[str], budget: int, stream: TextIO | None = None, enabled: bool = True, jobs: int = 1
    ):
        self.ops = ops
        self.budget = budget
        self.jobs = max(1, jobs)
        super().__init__(stream, enabled)
        self.done_trials: dict[str, int] = dict.fromkeys(ops, 0)
        self.finished: set[str] = set()
        self.started = time.monotonic()
        self.op_started: dict[str, float] = {}  # ops under way in this invocation -> when they began
        self.op_seconds: list[float] = []  # wall time of each op finished in this invocation (the ETA)
        self.builds, self.build_s = 0, 0.0  # extensions compiled in this invocation, and their time
        self._announced: set[str] = set()  # ops whose first judgement was announced
        self._lock = threading.Lock()

    def _head(self, op: str) -> str:
        return f"[{len(self.finished)}/{len(self.ops)} ops] {op}"

    def op_begin(self, op: str) -> None:
        """An op starts in this invocation: its wall time for the ETA counts from now (an op whose
        verdicts are all reused from the store ends in seconds, and is counted so)."""
        with self._lock:
            self.op_started.setdefault(op, time.monotonic())

    def judging(self, op: str, label: str, native: bool) -> None:
        """A judgement starts (``label``: "seed kernel", "trial 3/6", "final judgement"). Logs get
        the op's first one and its final one (the long ones), a terminal every one."""
        with self._lock:
            self.op_started.setdefault(op, time.monotonic())
            first = op not in self._announced
            self._announced.add(op)
            if not (self._tty or first or label.startswith("final")):
                return
            final = label.startswith("final")  # a kernel judged before: its build is kept (the same source)
            note = f"; {FINAL_NOTE}" if final else f"; {BUILD_NOTE}" if native else ""
            self._emit(f"{self._head(op)}: {label}: judging{note}")

    def judged(self, op: str, label: str, verdict: Any) -> None:
        """A judgement ended: a line when it compiled an extension (time, and the run's total)."""
        build = (getattr(verdict, "evidence", None) or {}).get("build") or {}
        built = build.get("builds") if isinstance(build, dict) else None
        if not built:
            return
        secs = float((getattr(verdict, "durations_s", None) or {}).get("build") or 0.0)
        with self._lock:
            self.builds += int(built)
            self.build_s += secs
            self._emit(f"{self._head(op)}: {label}: built its extension in {secs:.0f} s (builds so far: "
                       f"{self.builds}, {self.build_s:.0f} s)", final=True)

    def trial(self, op: str, n: int, total: int, best_speedup: float | None) -> None:
        with self._lock:
            self.op_started.setdefault(op, time.monotonic())
            self.done_trials[op] = max(self.done_trials.get(op, 0), n)
            best = f"{best_speedup:.2f}x" if best_speedup else "-"
            self._emit(
                f"{self._head(op)}: trial {n}/{min(total, self.budget)}, "
                f"best {best} vs eager, ETA {self._eta()}"
            )

    def op_done(self, op: str, skipped: bool = False, what: str = "done", final: Any = None,
                sessions: list[Any] | None = None) -> None:
        """An op ended; a finished one's line says what its final judgement found (``final``,
        ``sessions``: its verdicts)."""
        if what == "done" and not skipped:
            what = f"done: {_outcome(final, sessions or [])}"
        with self._lock:
            began = self.op_started.pop(op, None)
            # an op that judged nothing here (every verdict reused from the store) says nothing of
            # the ops left: its seconds stay out of the ETA's mean (a methods slice showed 0.0 min/op)
            if began is not None and not skipped and what.startswith("done") and op in self._announced:
                self.op_seconds.append(time.monotonic() - began)
            self.finished.add(op)
            self.done_trials[op] = self.budget
            what = "already finished (resumed run), skipped" if skipped else what
            eta = f" (ETA {self._eta()})" if what.startswith("done") and len(self.finished) < len(self.ops) else ""
            self._emit(f"{self._head(op)}: {what}{eta}", final=True)

    def _eta(self) -> str:
        if not self.op_seconds:
            return "after the first op"
        per = sum(self.op_seconds) / len(self.op_seconds)
        now = time.monotonic()
        left = [o for o in self.ops if o not in self.finished]
        secs = sum(max(0.0, per - (now - self.op_started[o]) if o in self.op_started else per) for o in left)
        return f"{_minutes(secs / self.jobs)} ({per / 60:.1f} min/op so far)"


def _minutes(secs: float) -> str:
    m = round(secs / 60)
    if m < 1:
        return "<1 min"
    return f"~{m} min" if m < 60 else f"~{m // 60} h {m % 60:02d} min"


def _outcome(final: Any, sessions: list[Any]) -> str:
    """An op's final judgement in words: its speedup over eager with the 95% interval and the
    direction, or its status."""
    if final is None:
        return "no valid kernel"
    sp = _speedup_of(final, sessions)
    if sp is None:
        return f"final judgement {final.status.value}" + (f" [{final.rule}]" if final.rule else "")
    return f"final {sp.value:.2f}x [{sp.ci_low:.2f}, {sp.ci_high:.2f}] vs eager, {sp.direction}"


def _final_speedup(r: OpResult) -> SpeedupCI | None:
    """The final kernel's speedup over eager, combined over its valid judging sessions."""
    return _speedup_of(r.final, r.final_sessions)


def _speedup_of(final: Any, final_sessions: list[Any]) -> SpeedupCI | None:
    if final is None or not final.valid:
        return None
    sessions = [v for v in (final_sessions or [final]) if v.valid]
    per = [v.speedups.get("eager") for v in sessions]
    if not per or any(s is None for s in per):
        return None
    return combine_sessions([SpeedupCI.from_verdict(s) for s in per])


def summary_table(results: list[OpResult]) -> str:
    """A plain-text table of the run's ops."""
    rows = [("op", "valid/total", "final vs eager [95% interval]", "vs eager", "sessions", "final status")]
    for r in results:
        sp = _final_speedup(r)
        if sp is not None:
            best = f"{sp.value:.2f}x [{sp.ci_low:.2f}, {sp.ci_high:.2f}]"
            sig, n = sp.direction, str(sp.sessions)
        else:
            best, sig, n = "-", "-", str(len(r.final_sessions) or "-")
        if r.status == "failed":
            status = "op failed (error below)"
        elif r.status in ("interrupted", "pending"):
            status = r.status + (f"; final {r.final.status.value}" if r.final is not None else "")
        elif r.final is not None:
            status = r.final.status.value + (f" [{r.final.rule}]" if r.final.rule else "")
        else:
            status = "no valid kernel"
        if r.skipped:
            status += " (earlier)"
        rows.append((r.op, f"{r.valid}/{r.total}", best, sig, n, status))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def op_errors(results: list[OpResult]) -> str:
    """Each failed or interrupted op's error in full, one block per op ("" when none)."""
    blocks = [f"{r.op} ({r.status}): {r.error.strip()}" for r in results
              if r.error and r.status in ("failed", "interrupted")]
    return "\n".join(blocks)
