"""Every statistic the leaderboard reports, defined once (docs/metrics.md explains each).

Inputs are plain per-op records (``OpOutcome``: one run's result on one op), so the same
functions serve the leaderboard, ``harness runs`` and tests with hand-made tables.

* per op: the final kernel's speedup over a baseline, over its judging sessions
  (``session_speedup``: geometric mean, 95% interval for a re-judgement); the deployed number
  max(1, speedup) of a valid kernel, 1 where there is none; the raw speedup (no clamp, valid
  kernels only);
* per run (one method, one seed): validity rates over all trials and over ops, median and
  geometric-mean speedup over ops (deployed and raw), fast_1 / fast_2, each with a
  percentile-bootstrap CI over ops;
* across runs of one entry (seeds): mean and a t-interval;
* between entries: Wilcoxon signed-rank over common ops on log speedups, Holm-corrected,
  with the matched-pairs rank-biserial correlation as effect size;
* ``leaderboard verify``'s rule: how many re-judged numbers must fall in their published 95%
  intervals (``hold_rule``, a one-sided binomial test).

The bootstrap is local (numpy, seeded): sandbox/timing/stats.py resamples timing samples, this one
resamples ops; the two share the percentile method.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from harness.estimate import Estimate, SpeedupCI

__all__ = ["Estimate", "SpeedupCI"]  # re-exported: SpeedupCI is defined once, in harness/estimate.py

BOOTSTRAP_RESAMPLES = 2000
ALPHA = 0.05
FAST_2_THRESHOLD = 2.0


@dataclass(frozen=True)
class OpOutcome:
    """One run's result on one op: trial counts and the final verdict's speedups."""

    op: str
    trials: int  # candidates proposed (every trial counts, unparseable ones too)
    compiled: int  # trials whose verdict is not compile_error (and that parsed)
    correct: int  # trials with a valid verdict
    final_status: str | None = None  # status of the final verdict of the best kernel (the worst
    # of its sessions: one session that is not valid makes the op not valid)
    speedups: dict[str, SpeedupCI] = field(default_factory=dict)  # baseline -> speedup, valid only

    def speedup(self, baseline: str) -> SpeedupCI | None:
        if self.final_status != "valid":
            return None
        return self.speedups.get(baseline)


@dataclass(frozen=True)
class RunSummary:
    """One run (method x seed) summarised over its ops, against one baseline."""

    baseline: str
    n_ops: int
    n_valid_ops: int
    compiled_rate: Estimate
    correct_rate: Estimate
    median: Estimate  # deployed: max(1, speedup) of a valid kernel, 1.0 without one
    geomean: Estimate
    median_raw: Estimate  # raw speedups, only ops with a valid kernel
    geomean_raw: Estimate
    fast_1: Estimate
    fast_2: Estimate
    valid_ops: Estimate = Estimate(None)  # share of ops whose final kernel is valid


@dataclass(frozen=True)
class PairwiseResult:
    a: str
    b: str
    n_common: int
    n_nonzero: int  # pairs with a nonzero difference (used by the test)
    statistic: float | None
    p_value: float | None
    p_holm: float | None
    rank_biserial: float | None  # > 0: a faster than b
    median_log_ratio: float | None  # median over ops of log(speedup_a / speedup_b)
    significant: bool = False


# -- building blocks ------------------------------------------------------------------------
def geomean(values: Sequence[float]) -> float:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("geomean of no values")
    if np.any(arr <= 0):
        raise ValueError("geomean needs positive values (speedups are > 0)")
    return float(np.exp(np.mean(np.log(arr))))


def bootstrap_ci(
    data: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    alpha: float = ALPHA,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap over the rows of ``data`` (ops). ``statistic`` maps an array of
    shape (resamples, n, ...) to (resamples,). Seeded: the same data gives the same CI."""
    data = np.asarray(data, dtype=float)
    n = data.shape[0]
    if n == 0:
        raise ValueError("bootstrap of no rows")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    values = np.asarray(statistic(data[idx]), dtype=float)
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def _estimate(data: np.ndarray, point: float, stat: Callable, seed: int) -> Estimate:
    lo, hi = bootstrap_ci(data, stat, seed=seed)
    # the percentile interval of a discrete statistic may not contain the point estimate by
    # floating-point hair; widen to keep "the estimate lies in its CI" true
    return Estimate(point, min(lo, point), max(hi, point), n=int(data.shape[0]))


def _median_stat(x: np.ndarray) -> np.ndarray:
    return np.median(x, axis=1)


def _geomean_stat(x: np.ndarray) -> np.ndarray:
    return np.exp(np.mean(np.log(x), axis=1))


def _mean_stat(x: np.ndarray) -> np.ndarray:
    return np.mean(x, axis=1)


def _ratio_stat(x: np.ndarray) -> np.ndarray:
    num = x[..., 0].sum(axis=1)
    den = x[..., 1].sum(axis=1)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


# -- per op ------------------------------------------------------------------------------------
def session_speedup(values: Sequence[float], level: float = 1 - ALPHA) -> tuple[float, float, float]:
    """(value, low, high) of a speedup measured in k >= 2 independent judging sessions.

    On the logs x_1..x_k of the sessions' speedups (each a ratio of the session's medians):
    value = exp(mean); the interval is the Student-t prediction interval for the mean of a
    re-judgement's k new sessions, exp(mean -+ t_{(1+level)/2, k-1} * sd * sqrt(1/k + 1/k)),
    so that a re-judgement under the same protocol falls inside it with probability ``level``
    when sessions vary independently and log-normally (docs/metrics.md)."""
    x = np.log(np.asarray(values, dtype=float))
    k = x.size
    if k < 2:
        raise ValueError("session_speedup needs at least two sessions")
    m = float(x.mean())
    half = float(sps.t.ppf((1 + level) / 2, df=k - 1) * x.std(ddof=1) * math.sqrt(2.0 / k))
    return math.exp(m), math.exp(m - half), math.exp(m + half)


def combine_sessions(per_session: Sequence[SpeedupCI]) -> SpeedupCI:
    """One speedup from its sessions' verdict speedups: the session itself when there is one,
    else ``session_speedup`` over their values."""
    if len(per_session) == 1:
        return per_session[0]
    vals = [s.value for s in per_session]
    v, lo, hi = session_speedup(vals)
    return SpeedupCI(v, lo, hi, sessions=len(vals), session_values=tuple(vals))


def op_speedup(outcome: OpOutcome, baseline: str, *, fallback: bool) -> float | None:
    """The op's speedup. ``fallback=True``: the deployed number, max(1, speedup) of a valid final
    kernel and 1.0 without one (a user keeps PyTorch where the kernel is slower or broken).
    ``fallback=False``: the raw speedup of a valid final kernel (no clamp), else None."""
    s = outcome.speedup(baseline)
    if s is not None:
        return max(1.0, s.value) if fallback else s.value
    return 1.0 if fallback else None


def is_fast(outcome: OpOutcome, baseline: str, threshold: float) -> bool:
    """fast_p: the final kernel is valid and its 95% interval lies above p (fast_1: "faster")."""
    s = outcome.speedup(baseline)
    return s is not None and s.ci_low > threshold


# -- per run -------------------------------------------------------------------------------------
def summarize_run(
    outcomes: Sequence[OpOutcome], baseline: str = "eager", *, seed: int = 0
) -> RunSummary:
    """Validity, median/geomean speedups (fallback and raw), fast_1/fast_2, with bootstrap CIs."""
    n = len(outcomes)
    empty = Estimate(None)
    if n == 0:
        return RunSummary(baseline, 0, 0, *([empty] * 9))
    valid = [o for o in outcomes if o.final_status == "valid"]
    if valid and not any(o.speedup(baseline) for o in valid):
        # the baseline was never measured (e.g. no torch.compile on a CPU): say nothing,
        # rather than count every op as a 1.0 fallback
        return RunSummary(baseline, n, len(valid), *([Estimate(None, n=n)] * 9))
    counts = np.array([[o.compiled, o.trials] for o in outcomes], dtype=float)
    correct = np.array([[o.correct, o.trials] for o in outcomes], dtype=float)
    total = counts[:, 1].sum()

    def rate(arr: np.ndarray, s: int) -> Estimate:
        if total == 0:
            return Estimate(None, n=n)
        return _estimate(arr, float(arr[:, 0].sum() / total), _ratio_stat, s)

    fb = np.array([op_speedup(o, baseline, fallback=True) for o in outcomes], dtype=float)
    raw_l = [op_speedup(o, baseline, fallback=False) for o in outcomes]
    raw = np.array([v for v in raw_l if v is not None], dtype=float)
    f1 = np.array([is_fast(o, baseline, 1.0) for o in outcomes], dtype=float)
    f2 = np.array([is_fast(o, baseline, FAST_2_THRESHOLD) for o in outcomes], dtype=float)
    vo = np.array([o.final_status == "valid" for o in outcomes], dtype=float)

    def over(
        arr: np.ndarray, point: Callable[[np.ndarray], float], stat: Callable, s: int
    ) -> Estimate:
        if arr.size == 0:
            return Estimate(None, n=0)
        return _estimate(arr, float(point(arr)), stat, s)

    return RunSummary(
        baseline=baseline,
        n_ops=n,
        n_valid_ops=int(raw.size),
        compiled_rate=rate(counts, seed),
        correct_rate=rate(correct, seed + 1),
        median=over(fb, np.median, _median_stat, seed + 2),
        geomean=over(fb, geomean, _geomean_stat, seed + 3),
        median_raw=over(raw, np.median, _median_stat, seed + 4),
        geomean_raw=over(raw, geomean, _geomean_stat, seed + 5),
        fast_1=over(f1, np.mean, _mean_stat, seed + 6),
        fast_2=over(f2, np.mean, _mean_stat, seed + 7),
        valid_ops=over(vo, np.mean, _mean_stat, seed + 8),
    )


# -- across seeds -------------------------------------------------------------------------------
def mean_ci(
    values: Sequence[float | None],
    alpha: float = ALPHA,
    *,
    log: bool = False,
    bounds: tuple[float, float] | None = None,
) -> Estimate:
    """Mean of repeated runs (seeds) with a Student-t interval; no interval for one run.

    ``log=True`` (speedups): the t-interval is taken on log values and mapped back, so the
    point is the geometric mean over seeds and the interval stays positive. ``bounds``
    clips the interval (rates stay within [0, 1])."""
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    if arr.size == 0:
        return Estimate(None)
    if log:
        arr = np.log(arr)
    m = float(arr.mean())
    if arr.size == 1:
        lo = hi = None
    else:
        sem = float(arr.std(ddof=1) / math.sqrt(arr.size))
        h = float(sps.t.ppf(1 - alpha / 2, df=arr.size - 1) * sem)
        lo, hi = m - h, m + h
    if log:
        m = math.exp(m)
        lo, hi = (math.exp(lo), math.exp(hi)) if lo is not None else (None, None)
    if bounds is not None and lo is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return Estimate(m, lo, hi, n=int(arr.size))


def entry_op_speedups(
    runs: Sequence[Sequence[OpOutcome]], baseline: str = "eager"
) -> dict[str, float]:
    """Per op, one speedup for an entry with several runs (seeds): the geometric mean over its
    runs of the deployed speedup (an op missing from a run is left out of that run)."""
    per_op: dict[str, list[float]] = {}
    for run in runs:
        for o in run:
            per_op.setdefault(o.op, []).append(op_speedup(o, baseline, fallback=True))  # type: ignore[arg-type]
    return {op: geomean(v) for op, v in per_op.items()}


# -- between entries --------------------------------------------------------------------------------
def rank_biserial(diffs: Sequence[float]) -> float | None:
    """Matched-pairs rank-biserial correlation: (W+ - W-) / (W+ + W-) over nonzero
    differences, ranks of |d| with ties averaged. +1: every pair favours the first."""
    d = np.asarray([x for x in diffs if x != 0], dtype=float)
    if d.size == 0:
        return None
    ranks = sps.rankdata(np.abs(d))
    w_plus = float(ranks[d > 0].sum())
    w_minus = float(ranks[d < 0].sum())
    return (w_plus - w_minus) / (w_plus + w_minus)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1), input order."""
    idx = [i for i, p in enumerate(p_values) if p is not None]
    m = len(idx)
    order = sorted(idx, key=lambda i: p_values[i])  # type: ignore[arg-type, return-value]
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for k, i in enumerate(order):
        adj = min(1.0, (m - k) * float(p_values[i]))  # type: ignore[arg-type]
        running = max(running, adj)
        out[i] = running
    return out


def wilcoxon_pair(
    a: dict[str, float], b: dict[str, float]
) -> tuple[int, int, float | None, float | None, float | None, float | None]:
    """(n_common, n_nonzero, W, p, rank-biserial, median log ratio) for two entries' per-op
    speedups. Two-sided Wilcoxon signed-rank on log(a/b); zero differences are dropped."""
    common = sorted(set(a) & set(b))
    d = [math.log(a[op]) - math.log(b[op]) for op in common]
    nz = [x for x in d if x != 0]
    med = float(np.median(d)) if d else None
    if not nz:
        return len(common), 0, None, None, None, med
    res = sps.wilcoxon(nz, zero_method="wilcox", alternative="two-sided")
    return len(common), len(nz), float(res.statistic), float(res.pvalue), rank_biserial(nz), med


def pairwise(
    entries: dict[str, dict[str, float]],
    alpha: float = ALPHA,
    comparable: Callable[[str, str], bool] | None = None,
) -> list[PairwiseResult]:
    """Every unordered pair of entries (name -> op -> speedup) for which ``comparable`` holds
    (default: all), Holm-corrected over the pairs compared."""
    names = sorted(entries)
    raw = []
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            if comparable is None or comparable(x, y):
                raw.append((x, y, *wilcoxon_pair(entries[x], entries[y])))
    adj = holm([r[5] for r in raw])
    return [
        PairwiseResult(
            a=x,
            b=y,
            n_common=nc,
            n_nonzero=nn,
            statistic=w,
            p_value=p,
            p_holm=ph,
            rank_biserial=rb,
            median_log_ratio=med,
            significant=ph is not None and ph < alpha,
        )
        for (x, y, nc, nn, w, p, rb, med), ph in zip(raw, adj, strict=True)
    ]


def entry_op_raw(runs: Sequence[Sequence[OpOutcome]], baseline: str = "eager") -> dict[str, float | None]:
    """Per op, the raw speedup of an entry: the geometric mean over its runs with a valid final
    kernel of the unclamped speedup; None where no run has one."""
    per_op: dict[str, list[float]] = {}
    for run in runs:
        for o in run:
            v = op_speedup(o, baseline, fallback=False)
            per_op.setdefault(o.op, []).extend([v] if v is not None else [])
    return {op: geomean(v) if v else None for op, v in per_op.items()}


# -- reproducing published numbers --------------------------------------------------------------
def hold_rule(checked: int, held: int, level: float = 1 - ALPHA, alpha: float = ALPHA) -> tuple[bool, float]:
    """(passes, p) for ``leaderboard verify``: each re-judged number falls in its published
    interval with probability ``level`` when the interval is right, so the count that holds is
    Binomial(checked, level). p = P(X <= held); the check fails when p <= alpha (a one-sided
    binomial test: fewer held than the intervals' level allows). 10 rows: at least 8 must hold;
    3 rows: at least 2; 1 row: it must hold."""
    if checked == 0:
        return True, 1.0
    p = float(sps.binom.cdf(held, checked, level))
    return p > alpha + 1e-12, p  # 1 - 0.95 is 0.05000000000000004 in floating point


def min_holding(checked: int, level: float = 1 - ALPHA, alpha: float = ALPHA) -> int:
    """The fewest of ``checked`` re-judged numbers that must hold for ``hold_rule`` to pass."""
    return next(h for h in range(checked + 1) if hold_rule(checked, h, level, alpha)[0])
