"""The leaderboard statistics against values computed by hand on small tables."""

from __future__ import annotations

import math

import pytest

from harness.stats import (
    OpOutcome,
    SpeedupCI,
    bootstrap_ci,
    entry_op_speedups,
    geomean,
    holm,
    is_fast,
    mean_ci,
    pairwise,
    rank_biserial,
    summarize_run,
    wilcoxon_pair,
)


def ok(op, value, lo, hi, sig, trials=4, compiled=3, correct=2, compile_sp=None):
    sp = {"eager": SpeedupCI(value, lo, hi, sig)}
    if compile_sp:
        sp["compile"] = SpeedupCI(*compile_sp)
    return OpOutcome(op, trials, compiled, correct, "valid", sp)


def bad(op, trials=4, compiled=1, status=None):
    return OpOutcome(op, trials, compiled, 0, status)


# table: 4 ops, one without a valid kernel
#   a: 2.0 [1.8, 2.2] significant     b: 4.0 [2.5, 5.0] significant
#   c: 0.5 [0.4, 0.6] (valid, slower)  d: no valid kernel
# deployed (max(1, speedup), 1 without a valid kernel): 2, 4, 1, 1; raw (valid only): 2, 4, 0.5
TABLE = [
    ok("a", 2.0, 1.8, 2.2, True),
    ok("b", 4.0, 2.5, 5.0, True),
    ok("c", 0.5, 0.4, 0.6, False),
    bad("d"),
]


def test_invalid_and_slower_ops_both_count_as_one_in_the_deployed_median_and_geomean():
    s = summarize_run(TABLE)
    # deployed speedups 2, 4, 1 (c is slower: PyTorch is kept), 1 (d) -> sorted 1 1 2 4 -> median 1.5
    assert s.median.value == pytest.approx(1.5)
    # geomean (2*4*1*1)^(1/4) = 8^(1/4)
    assert s.geomean.value == pytest.approx(8 ** 0.25)
    # raw: 2, 4, 0.5 -> median 2, geomean 4^(1/3)
    assert s.median_raw.value == pytest.approx(2.0)
    assert s.geomean_raw.value == pytest.approx(4 ** (1 / 3))
    assert (s.n_ops, s.n_valid_ops) == (4, 3)
    assert s.valid_ops.value == pytest.approx(0.75)


def test_validity_rates_pool_all_trials():
    s = summarize_run(TABLE)
    # trials 16; compiled 3+3+3+1 = 10; correct 2+2+2+0 = 6
    assert s.compiled_rate.value == pytest.approx(10 / 16)
    assert s.correct_rate.value == pytest.approx(6 / 16)


def test_fast_p_counts_valid_ops_whose_interval_lies_above_p():
    s = summarize_run(TABLE)
    # fast_1: a [1.8, 2.2] and b [2.5, 5.0] lie above 1 -> 2/4 ; fast_2: only b's 2.5 > 2 -> 1/4
    assert s.fast_1.value == pytest.approx(0.5)
    assert s.fast_2.value == pytest.approx(0.25)
    # a 2.0x whose CI reaches below 2 is not fast_2; a significant slowdown is not fast_1
    assert not is_fast(ok("x", 2.1, 1.9, 2.3, True), "eager", 2.0)
    assert not is_fast(ok("y", 0.9, 0.8, 0.95, True), "eager", 1.0)


def test_compile_baseline_is_summarised_separately():
    t = [ok("a", 2.0, 1.8, 2.2, True, compile_sp=(0.5, 0.4, 0.6, False)), bad("b")]
    s = summarize_run(t, "compile")
    assert s.median.value == pytest.approx(1.0)  # deployed: max(1, 0.5) and 1
    assert s.median_raw.value == pytest.approx(0.5) and s.geomean_raw.value == pytest.approx(0.5)
    assert s.fast_1.value == 0.0


def test_estimates_lie_in_their_bootstrap_cis_and_are_reproducible():
    s1, s2 = summarize_run(TABLE), summarize_run(TABLE)
    assert s1 == s2
    for est in (s1.median, s1.geomean, s1.fast_1, s1.compiled_rate, s1.geomean_raw):
        assert est.ci_low <= est.value <= est.ci_high
    # resampling 4 ops: the deployed geomean CI spans from 1 (resamples of the two 1.0 ops) to
    # above 2; the raw one reaches below 1 (resamples of c's 0.5)
    assert s1.geomean.ci_low == 1.0 and s1.geomean.ci_high > 2.0
    assert s1.geomean_raw.ci_low < 1.0 < 2.0 < s1.geomean_raw.ci_high


def test_bootstrap_of_a_constant_is_degenerate():
    import numpy as np

    lo, hi = bootstrap_ci(np.full(7, 3.0), lambda x: np.median(x, axis=1))
    assert lo == hi == 3.0


def test_empty_run_has_no_estimates():
    s = summarize_run([])
    assert s.n_ops == 0 and s.median.value is None and s.fast_1.value is None


def test_all_invalid_run_has_fallback_one_and_no_raw_numbers():
    s = summarize_run([bad("a"), bad("b")])
    assert s.median.value == 1.0 and s.geomean.value == 1.0
    assert s.median_raw.value is None and s.fast_1.value == 0.0


def test_geomean_by_hand():
    assert geomean([1, 2, 4, 8]) == pytest.approx(64**0.25)
    with pytest.raises(ValueError):
        geomean([1.0, 0.0])


def test_mean_ci_over_seeds_is_a_t_interval():
    # values 1, 2, 3: mean 2, sd 1, sem 1/sqrt(3), t(0.975, 2) = 4.302653
    e = mean_ci([1.0, 2.0, 3.0])
    h = 4.302653 / math.sqrt(3)
    assert e.value == pytest.approx(2.0)
    assert (e.ci_low, e.ci_high) == (pytest.approx(2 - h, abs=1e-5), pytest.approx(2 + h, abs=1e-5))
    single = mean_ci([1.7])
    assert single.value == 1.7 and single.ci_low is None


def test_entry_speedup_over_seeds_is_geomean_of_fallback_speedups():
    run1 = [ok("a", 2.0, 1.8, 2.2, True), bad("b")]
    run2 = [ok("a", 8.0, 7.0, 9.0, True), ok("b", 4.0, 3.0, 5.0, True)]
    e = entry_op_speedups([run1, run2])
    assert e["a"] == pytest.approx(4.0)  # sqrt(2 * 8)
    assert e["b"] == pytest.approx(2.0)  # sqrt(1 * 4)


def test_rank_biserial_by_hand():
    # d = 0.5, -0.2, 1.0, 0.3 -> ranks of |d|: 3, 1, 4, 2 ; W+ = 9, W- = 1 ; r = 8/10
    assert rank_biserial([0.5, -0.2, 1.0, 0.3]) == pytest.approx(0.8)
    # ties averaged: |d| = 1, 1 -> ranks 1.5, 1.5 ; W+ = W- -> 0 ; zeros dropped
    assert rank_biserial([1.0, -1.0, 0.0]) == pytest.approx(0.0)
    assert rank_biserial([0.0]) is None


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 0.03, 0.06, 0.04 -> monotone 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, None, 0.6]) == [pytest.approx(1.0), None, pytest.approx(1.0)]


def test_wilcoxon_pair_exact_p_by_hand():
    # log ratios e^0.5, e^-0.2, e^1.0, e^0.3 vs 1: W- = 1 of 16 equally likely sign patterns;
    # P(W <= 1) = 2/16, two-sided 4/16 = 0.25
    a = {"a": math.exp(0.5), "b": math.exp(-0.2), "c": math.exp(1.0), "d": math.exp(0.3), "x": 3.0}
    b = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "y": 2.0}
    n, nz, w, p, rb, med = wilcoxon_pair(a, b)
    assert (n, nz) == (4, 4)
    assert w == pytest.approx(1.0)
    assert p == pytest.approx(0.25)
    assert rb == pytest.approx(0.8)
    assert med == pytest.approx(0.4)  # median of 0.5, -0.2, 1.0, 0.3


def test_identical_methods_have_no_test_and_pairwise_applies_holm():
    same = {"a": 1.0, "b": 1.0}
    res = pairwise({"m1": same, "m2": dict(same), "m3": {"a": 2.0, "b": 3.0}})
    assert [(r.a, r.b) for r in res] == [("m1", "m2"), ("m1", "m3"), ("m2", "m3")]
    assert res[0].p_value is None and res[0].n_nonzero == 0
    # n=2, all negative: exact two-sided p = 2 * 1/4 = 0.5; Holm over 2 tests -> 1.0
    assert res[1].p_value == pytest.approx(0.5) and res[1].p_holm == pytest.approx(1.0)
    assert res[1].rank_biserial == pytest.approx(-1.0) and not res[1].significant


def test_mean_ci_of_speedups_over_seeds_is_geometric_and_positive():
    # logs of 1 and 4: mean log 2 ... point = sqrt(1 * 4) = 2; interval exp(m -+ h) stays > 0
    e = mean_ci([1.0, 4.0], log=True)
    h = 12.7062047 * (math.log(4) / math.sqrt(2)) / math.sqrt(2)
    assert e.value == pytest.approx(2.0)
    assert e.ci_low == pytest.approx(math.exp(math.log(2) - h), rel=1e-5) and e.ci_low > 0
    rates = mean_ci([0.1, 0.9], bounds=(0.0, 1.0))
    assert rates.ci_low == 0.0 and rates.ci_high == 1.0


def test_unmeasured_baseline_gives_no_numbers_rather_than_fallback_ones():
    # CPU runs measure no torch.compile baseline: valid kernels without a "compile" speedup
    s = summarize_run(TABLE, "compile")
    assert s.n_ops == 4 and s.geomean.value is None and s.fast_1.value is None
    assert s.correct_rate.value is None


def test_pairwise_skips_pairs_that_are_not_comparable_and_holm_counts_only_tested_pairs():
    a, b, c = {"x": 2.0, "y": 3.0}, {"x": 1.0, "y": 1.0}, {"x": 4.0, "y": 5.0}
    res = pairwise({"a": a, "b": b, "c": c}, comparable=lambda u, v: "c" not in (u, v))
    assert [(r.a, r.b) for r in res] == [("a", "b")]
    assert res[0].p_holm == res[0].p_value == pytest.approx(0.5)
