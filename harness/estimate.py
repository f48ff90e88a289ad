"""A number with its 95% confidence interval: what the statistics (harness/stats.py) compute
and what the leaderboard (harness/leaderboard/model.py) stores and shows; and ``SpeedupCI``,
the one speedup record on the harness side (the stats' per-op input and the leaderboard's best
kernel cells). No dependencies, so reading a leaderboard does not import numpy or scipy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% CI (``ci_*`` None when no interval exists, e.g. one seed;
    ``value`` None when nothing can be estimated, e.g. no ops)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0


@dataclass(frozen=True)
class SpeedupCI:
    """One speedup with its 95% CI and significance, keyed by its baseline where it is kept.

    The evaluator's ``sandbox.verdict.Speedup`` carries the same numbers plus its baseline
    name; it stays the verdict's own (the evaluator is a leaf and its JSON is versioned), and
    ``from_verdict`` is the one conversion."""

    value: float
    ci_low: float
    ci_high: float
    significant: bool = False
    p_value: float | None = None

    @classmethod
    def from_verdict(cls, s: Any) -> SpeedupCI:
        return cls(s.value, s.ci_low, s.ci_high, s.significant, s.p_value)
