"""A number with its 95% confidence interval: what the statistics (harness/stats.py) compute
and what the leaderboard (harness/leaderboard/model.py) stores and shows. No dependencies, so
reading a leaderboard does not import numpy or scipy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95% CI (``ci_*`` None when no interval exists, e.g. one seed;
    ``value`` None when nothing can be estimated, e.g. no ops)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
