"""The decisions of the reported-time cross-checks (sandbox/timing/wallclock.py) on samples shaped like
the H100's: the tail (idle event minus end event: ~10-20 us with a few us of jitter and a
right-skewed scheduling tail) and the parent's clock (~300-500 us with 50-150 us of spread,
2026-11-24). The kernels that hide work just above and just below the tail's floor run on the
GPU (tests/adversarial, cases gpu_cheat_34_hidden_tail and gpu_probe_34b_tail_below_floor)."""

from __future__ import annotations

import numpy as np
import pytest

from sandbox.timing import wallclock


def gaps(n: int, base_us: float, seed: int, hidden_us: float = 0.0) -> list[float]:
    rng = np.random.default_rng(seed)
    # jitter of a few us on every call, plus occasional scheduling delays of up to a few hundred
    noise = rng.normal(0.0, 3.0, n) + rng.exponential(15.0, n) + (rng.random(n) < 0.1) * rng.exponential(200.0, n)
    return list(base_us + hidden_us + noise)


@pytest.mark.parametrize("seed", range(20))
def test_honest_candidate_is_never_flagged(seed: int):
    g = wallclock.check(gaps(120, 1400.0, seed), gaps(70, 1400.0, seed + 1000), device_us=93.0)
    assert g is not None and not g.hidden, g.evidence()


@pytest.mark.parametrize("seed", range(20))
def test_work_hidden_at_one_and_a_half_floors_is_caught(seed: int):
    floor = wallclock.floor_us(93.0)
    g = wallclock.check(gaps(120, 1400.0, seed, hidden_us=1.5 * floor), gaps(70, 1400.0, seed + 1000), 93.0)
    assert g is not None and g.hidden, g.evidence()
    assert "end event" in g.message() and f"{g.floor_us:.0f} us" in g.message()


@pytest.mark.parametrize("seed", range(20))
def test_work_hidden_below_half_the_floor_is_not_flagged(seed: int):
    floor = wallclock.floor_us(93.0)
    g = wallclock.check(gaps(120, 1400.0, seed, hidden_us=0.4 * floor), gaps(70, 1400.0, seed + 1000), 93.0)
    assert g is not None and not g.hidden, g.evidence()


def test_floor_is_twenty_us_or_ten_percent_of_the_device_time():
    assert wallclock.floor_us(93.0) == 20.0
    assert wallclock.floor_us(5000.0) == pytest.approx(500.0)
    long = wallclock.check(gaps(120, 1400.0, 1, hidden_us=300.0), gaps(70, 1400.0, 2), device_us=5000.0)
    assert long is not None and not long.hidden  # 300 us is 6% of a 5 ms call: under the floor
    long = wallclock.check(gaps(120, 1400.0, 1, hidden_us=600.0), gaps(70, 1400.0, 2), device_us=5000.0)
    assert long is not None and long.hidden


def test_a_candidate_with_less_overhead_than_the_control_is_not_flagged():
    # host-bound candidates overlap the timing lead with their own launches: smaller gaps
    g = wallclock.check(gaps(120, 1300.0, 3), gaps(70, 1400.0, 4), device_us=93.0)
    assert g is not None and g.excess_us < 0 and not g.hidden


def test_too_few_control_calls_give_no_decision():
    assert wallclock.check(gaps(120, 1400.0, 5), gaps(wallclock.MIN_CONTROL - 1, 1400.0, 6), 93.0) is None


def test_control_spin_is_the_candidate_device_time_capped():
    assert wallclock.control_spin_us(93.0) == 93.0
    assert wallclock.control_spin_us(1e6) == wallclock.CONTROL_MAX_SPIN_US
    assert wallclock.control_spin_us(0.1) == 5.0


def parent_gaps(n: int, seed: int, hidden_us: float = 0.0) -> list[float]:
    """Parent-clock gaps as recorded on the H100: 330-740 us, median ~430."""
    rng = np.random.default_rng(seed)
    return list(330.0 + hidden_us + rng.exponential(90.0, n) + rng.normal(0.0, 20.0, n))


@pytest.mark.parametrize("seed", range(20))
def test_parent_clock_check_ignores_honest_spread_and_catches_a_forged_timer(seed: int):
    honest = wallclock.check(parent_gaps(20, seed), parent_gaps(20, seed + 500), 93.0, "parent clock")
    assert honest is not None and not honest.hidden, honest.evidence()
    forged = wallclock.check(parent_gaps(20, seed, hidden_us=300.0), parent_gaps(20, seed + 500), 93.0, "parent clock")
    assert forged is not None and forged.hidden and "parent's clock" in forged.message()
    assert wallclock.floor_us(93.0, "parent clock") == 200.0


def _judge_stub():
    from types import SimpleNamespace

    return SimpleNamespace(v=SimpleNamespace(timings={"candidate": SimpleNamespace(median_us=93.0)},
                                             host_timers=False, evidence={}))


def _round(seed: int, tail_hidden: float, parent_hidden: float, n: int = 20):
    return (parent_gaps(n, seed, parent_hidden), parent_gaps(n, seed + 1),
            gaps(n, 25.0, seed + 2, tail_hidden), gaps(n, 25.0, seed + 3))


def _samples(first, second):
    cg, kg, ct, kt = (a + b for a, b in zip(first, second, strict=True))
    marks = (len(first[0]), len(first[1]), len(first[2]), len(first[3]))
    return {"candidate": cg, "eager": parent_gaps(20, 99)}, kg, {"candidate": ct, "control": kt}, marks


def test_a_first_round_glitch_that_the_confirmation_round_does_not_repeat_is_not_rejected():
    from sandbox.timing.measure import _control_checks, _gap_check

    glitch, clean = _round(1, 46.0, 160.0), _round(2, 0.0, 0.0)
    assert any(c.hidden for c in _control_checks(93.0, glitch[0], glitch[1],
                                                 {"candidate": glitch[2], "control": glitch[3]}))
    gaps_d, ctl, tails, marks = _samples(glitch, clean)
    j = _judge_stub()
    _gap_check(j, gaps_d, {}, ctl, tails, confirm_from=marks)  # no Reject
    assert j.v.evidence["tail_us"]["confirmation_round"] is True
    assert j.v.evidence["tail_us"]["n_control"] == 20 and j.v.evidence["gap_us"]["n_control"] == 20  # only round 2
    assert j.v.evidence["tail_us"]["excess"] < j.v.evidence["tail_us"]["threshold"]


def test_hidden_work_that_fires_again_in_the_confirmation_round_is_rejected():
    from sandbox import rules
    from sandbox.errors import Reject
    from sandbox.timing.measure import _gap_check

    gaps_d, ctl, tails, marks = _samples(_round(3, 30.0, 0.0), _round(4, 30.0, 0.0))
    with pytest.raises(Reject) as r:
        _gap_check(_judge_stub(), gaps_d, {}, ctl, tails, confirm_from=marks)
    assert r.value.rule == rules.WALL_CLOCK and "end event" in r.value.message


@pytest.mark.parametrize("hidden_us, rejected", [(0.0, False), (40.0, True)])
def test_the_tail_after_the_worker_steps_is_checked_beside_the_tail(hidden_us: float, rejected: bool):
    """The tail is measured before the worker's host steps (a sync right after the end event);
    work the steps set off (a finalizer's launch) shows only in the tail after them, which is
    checked against the control's the same way and recorded apart."""
    from sandbox import rules
    from sandbox.errors import Reject
    from sandbox.timing.measure import _gap_check

    cg, kg, ct, kt = _round(7, 0.0, 0.0)
    steps = {"candidate": gaps(20, 90.0, 8, hidden_us), "control": gaps(20, 90.0, 9)}
    j = _judge_stub()
    if rejected:
        with pytest.raises(Reject) as r:
            _gap_check(j, {"candidate": cg, "eager": parent_gaps(20, 99)}, {}, kg,
                       {"candidate": ct, "control": kt}, steps_tails=steps)
        assert r.value.rule == rules.WALL_CLOCK and "host steps" in r.value.message
    else:
        _gap_check(j, {"candidate": cg, "eager": parent_gaps(20, 99)}, {}, kg, {"candidate": ct, "control": kt},
                   steps_tails=steps)
    assert j.v.evidence["steps_tail_us"]["n_control"] == 20
    assert (j.v.evidence["steps_tail_us"]["excess"] > j.v.evidence["steps_tail_us"]["threshold"]) is rejected


def test_the_control_returns_the_workers_snapshot_and_allocates_nothing():
    """The control's outputs are the worker's snapshot of the candidate's last outputs, so a
    candidate that fills the device's memory cannot make its set-up fail (sandbox/timing/control.py)."""
    import torch

    from sandbox.timing.control import Control

    spun: list[int] = []
    like = [torch.zeros(3, 4), torch.ones(2), 7]
    c = Control(torch, spun.append, 50, like)
    out = c(torch.ones(3, 4))
    assert spun == [50] and isinstance(out, tuple) and all(a is b for a, b in zip(out, like, strict=True))
    one = Control(torch, spun.append, 0, like[:1])
    assert one() is like[0] and spun == [50, 1]


def test_a_control_that_cannot_be_set_up_rejects_instead_of_falling_back():
    """Without its control the tail could only be compared with the eager baseline's gap, whose
    allowance (100 us) a 30 us hidden tail passes: the judgement stops rejected instead."""
    from types import SimpleNamespace

    from sandbox import rules
    from sandbox.errors import Reject
    from sandbox.timing.measure import _start_control

    cand = SimpleNamespace(request=lambda *a, **k: ({"ok": False, "error": "CUDA out of memory"}, 0))
    j = SimpleNamespace(cand=cand, call_bound=lambda floor=0.0: 10.0, v=SimpleNamespace(evidence={}))
    with pytest.raises(Reject) as r:
        _start_control(j, 70.0)
    assert r.value.rule == rules.WALL_CLOCK and "could not be set up" in r.value.message
    assert "unavailable" in j.v.evidence["wall_clock_control"]


# Tails recorded on an H200 (2026-11-28, docs/records/data/session29-2026-11-28/call3-c34.jsonl): a
# confirmation round of cheat #34 (30 us hidden) in which the control's tails drifted to 71-96 us,
# and the first round of probe #34b (8 us hidden), us, in call order.
H200_34_CANDIDATE = [99.2, 86.5, 94.4, 95.5, 102.9, 93.4, 111.9, 88.7, 94.8, 88.2, 94.6, 88.5, 86.4, 97.4, 90.0,
                     115.8, 86.9, 95.8, 99.4, 98.5]
H200_34_CONTROL = [73.6, 77.4, 90.8, 77.6, 76.4, 80.0, 84.9, 73.3, 73.5, 75.9, 72.9, 82.2, 74.0, 70.6, 77.1, 73.5,
                   96.4, 76.2, 76.0, 78.2]
H200_34B_CANDIDATE = [33.6, 29.8, 30.0, 30.4, 32.0, 36.9, 37.2, 32.3, 34.3, 32.5, 30.8, 33.7, 30.6, 34.6, 32.9, 32.8,
                      34.4, 31.7, 33.8, 34.2, 42.5, 40.1, 64.5, 45.7, 44.2, 51.1, 33.8, 34.3, 35.1, 31.3, 35.3, 32.1,
                      32.1, 30.9, 31.7, 31.7, 48.0, 70.4, 45.0, 49.3, 53.0, 44.4, 39.6, 48.3, 50.2, 45.2, 35.6, 92.1,
                      62.3, 50.6]
H200_34B_CONTROL = [29.2, 24.1, 24.8, 23.4, 23.7, 25.7, 26.5, 25.2, 28.9, 24.7, 24.4, 25.1, 29.7, 24.5, 24.9, 25.7,
                    25.2, 44.4, 44.6, 42.5, 53.9, 61.9, 26.6, 44.6, 45.3, 29.3, 25.8, 25.4, 25.1, 30.6, 25.6, 32.2,
                    26.6, 24.5, 25.3, 70.0, 50.0, 56.0, 41.9, 45.6, 69.2, 49.2, 42.4, 37.9, 26.6, 42.4, 61.2, 66.6,
                    72.3, 44.9]


@pytest.mark.parametrize("what", ["tail", wallclock.STEPS_TAIL])
def test_a_tail_hidden_under_a_drifting_control_is_caught_by_its_pairs(what: str):
    """The control's low quantile drifted up with the worker's host latency, so the quantile excess
    (13.5 us) fell under the threshold (15 us); the call-by-call differences did not drift."""
    g = wallclock.check(H200_34_CANDIDATE, H200_34_CONTROL, 68.9, what)
    assert g is not None and g.excess_us < g.threshold_us < g.paired_us
    assert g.hidden and f"{g.paired_us:.0f} us longer" in g.message()
    probe = wallclock.check(H200_34B_CANDIDATE, H200_34B_CONTROL, 69.0, what)
    assert probe is not None and not probe.hidden, probe.evidence()


def test_the_parent_clock_decides_on_its_quantile_alone():
    g = wallclock.check([x + 160.0 for x in H200_34_CONTROL], H200_34_CONTROL, 68.9, "parent clock")
    assert g is not None and g.paired_us is None and g.excess_us == pytest.approx(160.0) and g.hidden
    g = wallclock.check(H200_34_CANDIDATE, H200_34_CONTROL, 68.9, "parent clock")
    assert g is not None and not g.hidden and g.evidence()["paired_median"] is None


@pytest.mark.parametrize("share", [0.6, 0.8])
def test_a_tail_hidden_in_most_but_not_all_calls_is_caught(share: float):
    """30 us hidden in 60% or 80% of the calls: the low quantile sees the calls that hide nothing,
    the paired median does not; fewer than half cannot move the median time anyway."""
    rng = np.random.default_rng(int(share * 10))
    control = list(20.0 + rng.exponential(3.0, 40))
    hide = rng.random(40) < share
    candidate = [c + rng.normal(0.0, 1.0) + (30.0 if h else 0.0) for c, h in zip(control, hide, strict=True)]
    g = wallclock.check(candidate, control, 70.0, "tail")
    assert g is not None and g.hidden, g.evidence()
    if share < 0.7:  # the quantile alone let it through
        assert g.excess_us < g.threshold_us < g.paired_us, g.evidence()
