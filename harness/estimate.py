"""A number with its 95% confidence interval: what the statistics (harness/stats.py) compute
and what the leaderboard (harness/leaderboard/model.py) stores and shows; and ``SpeedupCI``,
the one speedup record on the harness side (the stats' per-op input and the leaderboard's best
kernel cells). No dependencies, so reading a leaderboard does not import numpy or scipy.

Every speedup is described by the side of 1 its 95% interval lies on (``direction_of``):
*faster* (the interval lies above 1), *slower* (below 1) or *no clear difference* (it holds 1),
i.e. two one-sided tests at 2.5% each, a two-sided test at 5% (docs/metrics.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FASTER = "faster"
SLOWER = "slower"
UNCLEAR = "no clear difference"
LEVEL = 0.95  # the level of every published interval


def direction_of(ci_low: float | None, ci_high: float | None) -> str:
    """faster / slower / no clear difference: where the 95% interval of a speedup lies."""
    if ci_low is not None and ci_low > 1.0:
        return FASTER
    if ci_high is not None and ci_high < 1.0:
        return SLOWER
    return UNCLEAR


def describe(value: float, ci_low: float, ci_high: float, baseline: str = "eager",
             sessions: int = 1) -> str:
    """One line a reader cannot misread: '0.130x [0.128, 0.133]: slower than eager (95% interval
    below 1, one session)'."""
    d = direction_of(ci_low, ci_high)
    where = {FASTER: "95% interval above 1", SLOWER: "95% interval below 1",
             UNCLEAR: "95% interval holds 1"}[d]  # fmt: skip
    what = f"{d} than {baseline}" if d != UNCLEAR else f"{d} from {baseline}"
    over = f"{sessions} sessions" if sessions > 1 else "one session"
    return f"{value:.3f}x [{ci_low:.3f}, {ci_high:.3f}]: {what} ({where}, {over})"


def speedup_words(s: Any, baseline: str = "eager") -> str:
    """A verdict's speedup (one judging session) for a terminal: value, 95% CI, direction, and
    the evaluator's one-sided Mann-Whitney p labelled with its direction, e.g.
    '0.130x  95% CI [0.128, 0.133]: slower than eager (CI below 1; Mann-Whitney p(faster) = 1)'."""
    d = direction_of(s.ci_low, s.ci_high)
    what = {FASTER: f"faster than {baseline} (CI above 1",
            SLOWER: f"slower than {baseline} (CI below 1",
            UNCLEAR: f"no clear difference from {baseline} (CI holds 1"}[d]  # fmt: skip
    p = "" if s.p_value is None else f"; Mann-Whitney p(faster) = {s.p_value:.3g}"
    return f"{s.value:6.3f}x  95% CI [{s.ci_low:.3f}, {s.ci_high:.3f}]: {what}{p})"


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
    """One speedup with its 95% interval, keyed by its baseline where it is kept.

    ``sessions`` 1: the interval is the verdict's own (bootstrap over the timing samples of one
    judging session: timing noise only). ``sessions`` k >= 2: ``value`` is the geometric mean of
    the k sessions' speedups (``session_values``) and the interval is over sessions: it contains
    the geometric mean of a re-judgement's k sessions with 95% probability (harness/stats.py
    ``session_speedup``). ``direction`` and ``significant`` (direction clear at 5%, two-sided)
    follow from the interval. ``p_value``: the verdict's one-sided Mann-Whitney p (H1: faster)
    of a one-session speedup, else None.

    The evaluator's ``sandbox.verdict.Speedup`` carries a session's numbers plus its baseline
    name; it stays the verdict's own (the evaluator is a leaf and its JSON is versioned), and
    ``from_verdict`` is the one conversion."""

    value: float
    ci_low: float
    ci_high: float
    significant: bool = False
    p_value: float | None = None
    sessions: int = 1
    session_values: tuple[float, ...] = ()
    direction: str = ""

    def __post_init__(self) -> None:
        d = direction_of(self.ci_low, self.ci_high)
        object.__setattr__(self, "direction", d)
        object.__setattr__(self, "significant", d != UNCLEAR)
        object.__setattr__(self, "session_values", tuple(self.session_values))

    @property
    def interval_kind(self) -> str:
        return f"over {self.sessions} sessions" if self.sessions > 1 else "within one session"

    def describe(self, baseline: str = "eager") -> str:
        return describe(self.value, self.ci_low, self.ci_high, baseline, self.sessions)

    @classmethod
    def from_verdict(cls, s: Any) -> SpeedupCI:
        return cls(s.value, s.ci_low, s.ci_high, p_value=s.p_value)
