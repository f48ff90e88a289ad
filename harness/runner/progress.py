"""Progress on stderr while a run goes (op, trial, best speedup so far, ETA) and the summary
table at the end (op, valid/total, the final kernel's speedup vs eager with its 95% interval
over its judging sessions, faster / slower / no clear difference, final status)."""

from __future__ import annotations

import threading
import time
from typing import TextIO

from harness.estimate import SpeedupCI
from harness.runner.op import OpResult
from harness.stats import combine_sessions
from harness.statusline import StatusLines


class Progress(StatusLines):
    def __init__(
        self, ops: list[str], budget: int, stream: TextIO | None = None, enabled: bool = True
    ):
        self.ops = ops
        self.budget = budget
        super().__init__(stream, enabled)
        self.done_trials: dict[str, int] = dict.fromkeys(ops, 0)
        self.finished: set[str] = set()
        self.started = time.monotonic()
        self.judged = 0  # trials judged in this invocation (for the ETA)
        self._lock = threading.Lock()

    def trial(self, op: str, n: int, total: int, best_speedup: float | None) -> None:
        with self._lock:
            self.done_trials[op] = max(self.done_trials.get(op, 0), n)
            self.judged += 1
            best = f"{best_speedup:.2f}x" if best_speedup else "-"
            self._emit(
                f"[{len(self.finished)}/{len(self.ops)} ops] {op}: trial {n}/{min(total, self.budget)}, "
                f"best {best} vs eager, ETA {self._eta()}"
            )

    def op_done(self, op: str, skipped: bool = False) -> None:
        with self._lock:
            self.finished.add(op)
            self.done_trials[op] = self.budget
            what = "already finished (resumed run), skipped" if skipped else "done"
            self._emit(f"[{len(self.finished)}/{len(self.ops)} ops] {op}: {what}", final=True)

    def _eta(self) -> str:
        remaining = sum(
            max(0, self.budget - self.done_trials.get(o, 0))
            for o in self.ops
            if o not in self.finished
        )
        if not self.judged:
            return "?"
        per = (time.monotonic() - self.started) / self.judged
        secs = int(per * remaining)
        return f"{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}"



def _final_speedup(r: OpResult) -> SpeedupCI | None:
    """The final kernel's speedup over eager, combined over its valid judging sessions."""
    if r.final is None or not r.final.valid:
        return None
    sessions = [v for v in (r.final_sessions or [r.final]) if v.valid]
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
            status = "op failed: " + (r.error or "").splitlines()[0][:60]
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
