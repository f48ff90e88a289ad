"""sandbox/timing/stats.py against cases computed by hand."""

from __future__ import annotations

import pytest

from sandbox.timing import stats


def test_bootstrap_ci_of_constant_samples_is_a_point():
    assert stats.bootstrap_ci([5.0] * 30) == (5.0, 5.0, 5.0)


def test_bootstrap_ci_median_and_bounds_are_sample_values():
    xs = [1.0, 2.0, 3.0, 4.0, 100.0]
    med, lo, hi = stats.bootstrap_ci(xs, seed=1)
    assert med == 3.0  # the median ignores the outlier
    assert lo <= med <= hi
    assert lo in xs and hi in xs  # a median of 5 resampled values is one of the values


def test_bootstrap_ci_is_seeded():
    xs = [float(i % 7) for i in range(50)]
    assert stats.bootstrap_ci(xs, seed=3) == stats.bootstrap_ci(xs, seed=3)


def test_bootstrap_ci_narrows_with_more_samples():
    import numpy as np

    rng = np.random.default_rng(0)
    small = rng.normal(100, 10, 20)
    big = rng.normal(100, 10, 2000)
    w_small = stats.bootstrap_ci(small)[2] - stats.bootstrap_ci(small)[1]
    w_big = stats.bootstrap_ci(big)[2] - stats.bootstrap_ci(big)[1]
    assert w_big < w_small / 4


def test_ratio_ci_point_is_ratio_of_medians():
    val, lo, hi = stats.ratio_ci([10.0, 10.0, 10.0], [2.0, 2.0, 2.0])
    assert (val, lo, hi) == (5.0, 5.0, 5.0)


def test_mann_whitney_one_sided_by_hand():
    # every candidate sample below every baseline sample: U = 0; exact one-sided p = 1/C(6,3) = 0.05
    p = stats.faster_p_value([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert p == pytest.approx(0.05)
    # reversed: the candidate is slower, p is large
    assert stats.faster_p_value([4.0, 5.0, 6.0], [1.0, 2.0, 3.0]) == pytest.approx(1.0)
    assert stats.faster_p_value([1.0], [2.0]) is None


def test_converged_needs_min_samples_and_tight_ci():
    assert not stats.converged([1.0] * 5, 0.01)
    assert stats.converged([1.0] * 50, 0.01)
    assert not stats.converged([1.0, 10.0] * 25, 0.01)
