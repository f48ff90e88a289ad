"""The task check's answer (sandbox/intake/taskcheck.py): ``TaskCheck``, the refusal it makes
(``DegenerateTask``), and the answers kept per task source, device kind and profile beside the
reference cache's entry (``<cache root>/reference/<key>.checks.json``)."""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from sandbox.intake.task import Task, TaskError

CHECK = "task.degenerate"  # the check's id, named in every refusal
VERSION = 1  # bump when the draws or the comparison change: kept answers of other versions are ignored
DRAWS = 3  # the first draw and two redraws of inputs and weights


@dataclass(frozen=True)
class TaskCheck:
    """The answer for one task at one profile on one device kind."""

    task: str
    path: str
    profile: str
    device: str  # "cpu" | "cuda": the kind (the answer does not depend on which GPU)
    degenerate: bool | None  # None: not decided (the reference failed; judging reports it)
    atol: float
    rtol: float
    draws: int = DRAWS
    max_abs_diff: float | None = None  # the largest |redraw - first draw| over the redraws
    changed: float | None = None  # the smallest share of output elements beyond tolerance, over the redraws
    error: str = ""
    cached: bool = False  # read from the kept answers, not computed now
    # where the check's time went, in seconds: "setup", "own_call", "keep_own", "check_own" summed over the draws;
    # "start" (the reference worker's start) and "warm" (its GPU warm-up) on the first task a worker checked
    took_s: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "cached"}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TaskCheck:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def evidence(self) -> str:
        """The evidence in words (one line, for ``suite lint`` and the refusal)."""
        if self.degenerate is None:
            return f"not decided: the reference failed: {self.error[:300]}"
        diff = "-" if self.max_abs_diff is None else f"{self.max_abs_diff:.2g}"
        if self.degenerate:
            return (f"{self.draws} draws of inputs and weights at profile {self.profile} ({self.device}) agree "
                    f"within atol {self.atol:g} / rtol {self.rtol:g} (largest difference {diff})")
        share = "-" if self.changed is None else f"{100 * self.changed:.3g}%"
        return (f"redrawn inputs and weights change {share} of the output beyond atol {self.atol:g} / "
                f"rtol {self.rtol:g} (largest difference {diff}; {self.draws} draws at profile {self.profile})")

    def refusal(self) -> str:
        """The one-line error of ``harness eval``, ``eval-batch`` and ``run``."""
        return (f"{self.path}: task check {CHECK}: the reference's output does not change beyond its tolerance "
                f"when its inputs and weights are redrawn: {self.evidence()}; any output near it passes. Fix or "
                "retire the task, or pass --allow-degenerate to judge it anyway (recorded in the verdict)")


class DegenerateTask(TaskError):
    """A task the check found degenerate, refused (a TaskError: exit 2 where task errors are)."""

    check = CHECK

    def __init__(self, result: TaskCheck) -> None:
        super().__init__(result.refusal())
        self.result = result


# -- the kept answers ------------------------------------------------------------------------------

def store_path(root: str | os.PathLike[str], task: Task, device: str) -> Path:
    """Beside the reference cache's entry of the task on this device kind (not inside it: the
    entry's files are copied into every reference worker)."""
    from sandbox.check.refcache import entry_dir

    return Path(entry_dir(root, task.source, device) + ".checks.json")


def _read(path: Path) -> dict[str, Any]:
    try:
        d = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return d.get("results", {}) if isinstance(d, dict) and d.get("version") == VERSION else {}


def lookup(root: str | os.PathLike[str], task: Task, profile: str, device: str) -> TaskCheck | None:
    d = _read(store_path(root, task, device)).get(profile)
    if not isinstance(d, dict):
        return None
    try:
        # the same source may sit at another path now: the answer names the file asked about
        return replace(TaskCheck.from_dict(d), cached=True, task=task.name, path=str(task.path))
    except TypeError:
        return None


def keep(root: str | os.PathLike[str], task: Task, device: str, result: TaskCheck) -> None:
    if result.degenerate is None:  # a failing reference may be this machine's moment: asked again next time
        return
    path = store_path(root, task, device)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        results = _read(path)
        results[result.profile] = result.to_dict()
        tmp = path.with_name(f"{path.name}.kh-tmp-{secrets.token_hex(4)}")
        tmp.write_text(json.dumps({"version": VERSION, "results": results}, indent=1))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: checked again next time
