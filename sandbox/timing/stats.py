"""Timing statistics: median with a percentile-bootstrap CI, speedup CIs, Mann-Whitney tests.

Vectorised numpy, seeded, so the same samples always give the same numbers. The leaderboard
reuses ``bootstrap_ci``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

N_BOOT = 2000
ALPHA = 0.05


def bootstrap_ci(samples: Sequence[float], stat: str = "median", n_boot: int = N_BOOT,
                 conf: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """(statistic, low, high): percentile bootstrap CI of the median (or mean) of ``samples``."""
    x = np.asarray(samples, dtype=float)
    if x.size == 0:
        raise ValueError("bootstrap_ci needs at least one sample")
    f = np.median if stat == "median" else np.mean
    point = float(f(x))
    if x.size == 1:
        return point, point, point
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    boots = f(x[idx], axis=1)
    a = (1 - conf) / 2
    lo, hi = np.quantile(boots, [a, 1 - a])
    return point, float(lo), float(hi)


def ratio_ci(baseline: Sequence[float], candidate: Sequence[float], n_boot: int = N_BOOT,
             conf: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """(median(baseline)/median(candidate), low, high) with independent bootstrap resamples."""
    b = np.asarray(baseline, dtype=float)
    c = np.asarray(candidate, dtype=float)
    point = float(np.median(b) / np.median(c))
    rng = np.random.default_rng(seed)
    bb = np.median(b[rng.integers(0, b.size, size=(n_boot, b.size))], axis=1)
    cc = np.median(c[rng.integers(0, c.size, size=(n_boot, c.size))], axis=1)
    a = (1 - conf) / 2
    lo, hi = np.quantile(bb / cc, [a, 1 - a])
    return point, float(lo), float(hi)


def faster_p_value(candidate: Sequence[float], baseline: Sequence[float]) -> float | None:
    """One-sided Mann-Whitney U p-value for H1: candidate times are smaller than baseline's."""
    if len(candidate) < 2 or len(baseline) < 2:
        return None
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(candidate, baseline, alternative="less").pvalue)


def converged(samples: Sequence[float], target_ci: float, seed: int = 0, min_n: int = 20) -> bool:
    """CI half-width below ``target_ci`` x median (and at least ``min_n`` samples)."""
    if len(samples) < min_n:
        return False
    med, lo, hi = bootstrap_ci(samples, n_boot=500, seed=seed)
    return (hi - lo) / 2 <= target_ci * med
