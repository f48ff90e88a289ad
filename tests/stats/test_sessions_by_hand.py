"""Issue 29's statistics by hand: the interval over judging sessions, the direction words, the
deployed (clamped) and raw per-op numbers, and verify's hold rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.estimate import FASTER, SLOWER, UNCLEAR, SpeedupCI, direction_of, speedup_words
from harness.stats import (
    OpOutcome,
    combine_sessions,
    entry_op_raw,
    entry_op_speedups,
    hold_rule,
    min_holding,
    op_speedup,
    session_speedup,
)
from sandbox.verdict import Speedup


def test_session_interval_is_the_t_prediction_interval_of_a_rejudgements_mean():
    vals = [2.0, 2.2, 1.9]
    x = np.log(vals)
    m, sd = x.mean(), x.std(ddof=1)
    t = 4.302652729911275  # t_{0.975, 2}
    half = t * sd * math.sqrt(1 / 3 + 1 / 3)
    v, lo, hi = session_speedup(vals)
    assert v == pytest.approx(math.exp(m)) == pytest.approx((2.0 * 2.2 * 1.9) ** (1 / 3))
    assert (lo, hi) == (pytest.approx(math.exp(m - half)), pytest.approx(math.exp(m + half)))
    with pytest.raises(ValueError):
        session_speedup([2.0])


def test_the_interval_over_sessions_holds_a_rejudgement_95_percent_of_the_time():
    """The claim verify's rule rests on, simulated: log-normal session speedups, k = 3 sessions
    published, a re-judgement of 3 new sessions falls in the published interval at 95%."""
    rng = np.random.default_rng(7)
    n, k = 20000, 3
    old = rng.normal(0.3, 0.05, size=(n, k))
    new = rng.normal(0.3, 0.05, size=(n, k)).mean(axis=1)
    half = sps.t.ppf(0.975, k - 1) * old.std(axis=1, ddof=1) * math.sqrt(2 / k)
    inside = np.abs(new - old.mean(axis=1)) <= half
    assert inside.mean() == pytest.approx(0.95, abs=0.006)
    # and the same function gives the same interval as the vectorised one here
    v, lo, hi = session_speedup(np.exp(old[0]))
    assert math.log(hi) - math.log(v) == pytest.approx(half[0])


def test_one_session_keeps_the_verdicts_own_interval_and_three_are_combined():
    one = SpeedupCI(1.5, 1.4, 1.6, p_value=0.001)
    assert combine_sessions([one]) is one and one.interval_kind == "within one session"
    three = combine_sessions([SpeedupCI(v, v * 0.99, v * 1.01) for v in (1.5, 1.6, 1.55)])
    assert three.sessions == 3 and three.session_values == (1.5, 1.6, 1.55)
    assert three.interval_kind == "over 3 sessions" and three.direction == FASTER
    assert three.value == pytest.approx((1.5 * 1.6 * 1.55) ** (1 / 3))


def test_a_clear_slowdown_reads_slower_not_not_significant():
    # the case: 0.130x, CI [0.128, 0.133], the evaluator's one-sided p(faster) = 1
    s = Speedup("eager", 0.130, 0.128, 0.133, 1.0, False)
    words = speedup_words(s)
    assert "slower than eager" in words and "CI below 1" in words
    assert "not significant" not in words and "p(faster) = 1" in words
    assert SpeedupCI.from_verdict(s).direction == SLOWER and SpeedupCI.from_verdict(s).significant
    assert direction_of(0.128, 0.133) == SLOWER
    assert direction_of(1.02, 1.10) == FASTER
    assert direction_of(0.98, 1.05) == UNCLEAR == "no clear difference"
    assert "no clear difference from eager" in speedup_words(Speedup("eager", 1.0, 0.98, 1.05, 0.4, False))


def ok(op, v):
    return OpOutcome(op, 4, 4, 1, "valid", {"eager": SpeedupCI(v, v * 0.95, v * 1.05)})


def test_deployed_is_max_one_and_raw_leaves_out_ops_without_a_valid_kernel():
    slow, fast, failed = ok("a", 0.10), ok("b", 3.0), OpOutcome("c", 4, 1, 0, "incorrect")
    assert [op_speedup(o, "eager", fallback=True) for o in (slow, fast, failed)] == [1.0, 3.0, 1.0]
    assert [op_speedup(o, "eager", fallback=False) for o in (slow, fast, failed)] == [0.10, 3.0, None]
    # over seeds: deployed geomean of max(1, s); raw geomean over the seeds with a valid kernel
    runs = [[ok("a", 0.5), failed], [ok("a", 2.0), ok("c", 4.0)]]
    assert entry_op_speedups(runs) == {"a": pytest.approx(math.sqrt(2.0)), "c": pytest.approx(2.0)}
    assert entry_op_raw(runs) == {"a": pytest.approx(1.0), "c": pytest.approx(4.0)}


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 20])
def test_hold_rule_is_a_one_sided_binomial_test_at_the_intervals_level(n):
    def cdf(h):  # P(X <= h), X ~ Binomial(n, 0.95), by hand
        return sum(math.comb(n, i) * 0.95**i * 0.05 ** (n - i) for i in range(h + 1))

    need = min_holding(n)
    assert hold_rule(n, need)[0] and not hold_rule(n, need - 1)[0]
    assert cdf(need) > 0.05 + 1e-12 and cdf(need - 1) <= 0.05 + 1e-12
    assert hold_rule(n, need)[1] == pytest.approx(cdf(need))
    assert hold_rule(n, n) == (True, pytest.approx(1.0))


def test_hold_rule_thresholds_stated_in_the_docs():
    assert [min_holding(n) for n in (1, 3, 10)] == [1, 2, 8]
    assert hold_rule(0, 0) == (True, 1.0)
