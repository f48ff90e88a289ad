"""Other threads' CPU between a call's end and its output's check (sandbox/check/calls.py,
check_window): an honest candidate whose own housekeeping thread sometimes wakes inside a
window stays valid; an output rewritten after every call (#36) does not."""

from __future__ import annotations

import pytest

from sandbox import rules
from sandbox.check.calls import (
    CHECK_BG_MIN_OVER,
    CHECK_BG_OVER_SHARE,
    CHECK_BG_OWN_EVERY_S,
    CHECK_BG_OWN_US,
    own_excused,
)
from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Mode, Status
from tests.adversarial.redteam import TASKS, Case, config, describe

pytestmark = pytest.mark.slow


def _judge(stem: str):
    """Final mode, timing until its 3 s cap (a CI target no run reaches): hundreds of checked
    windows, so a thread that wakes every 250 ms lands in some of them."""
    case = Case(stem, "relu", (Status.VALID,), mode=Mode.FINAL)
    return evaluate(load_task(TASKS / "relu.py"), case.source(), config(case, max_timing_s=3.0, target_ci=1e-6))


def test_a_housekeeping_thread_that_wakes_inside_some_windows_is_not_a_rewrite():
    v = _judge("honest_cpu_relu_housekeeper")
    ev = v.evidence.get("check_bg_us", {})
    assert v.status is Status.VALID, describe(v) + f"\n{ev}"
    # the test is about windows that were over: its thread (2 ms every 250 ms) landed in some
    assert ev["enforced"] and ev["over"] >= 1 and ev["windows"] > 4 * ev["over"], ev
    # each window over names whose CPU it was, and the candidate's thread is the busiest in most of
    # them (not all: in a CI run on 2026-11-28 one of three windows over had the worker's own thread
    # busiest, not excused; the verdict was valid, as the share rule wants)
    firsts = [busiest[0][0] for _, _, _, busiest in ev["over_at"]]
    assert firsts and 2 * sum("(worker's own)" not in f for f in firsts) > len(firsts), ev["over_at"]


@pytest.mark.parametrize(("us", "own", "since", "excused"), [
    (120.0, 100.0, 5.0, 100.0),  # a wake of the worker's own thread alone put the window over
    (120.0, 100.0, CHECK_BG_OWN_EVERY_S - 0.1, 0.0),  # ... again too soon: a thread made to work
    (400.0, 100.0, 5.0, 0.0),  # over without it too: the candidate's threads worked
    (90.0, 80.0, 5.0, 0.0),  # not over: nothing to excuse
    (CHECK_BG_OWN_US + 200.0, CHECK_BG_OWN_US + 200.0, 5.0, 0.0),  # past one wake's worth by more than allowed
])
def test_the_worker_own_threads_are_excused_one_window_in_a_while(us, own, since, excused):
    """Kineto's config loader, alive before any candidate code, wakes every 5 s: its CPU is excused
    where it alone puts a window over (allowed 100 us here), once per CHECK_BG_OWN_EVERY_S and up to
    CHECK_BG_OWN_US; a candidate that signals that thread to work for it gets no more than that."""
    assert own_excused(us, own, 100.0, since) == excused


def test_an_output_rewritten_after_every_call_shows_in_the_windows_checked():
    """The rewriter thread spins on the output region from import on, so the windows checked
    carry its CPU, whichever check ends the judgement: the check window itself (rejected
    timing.threads, once CHECK_BG_MIN_OVER windows and more than CHECK_BG_OVER_SHARE of them are
    over) or, when a fetch beat the rewrite, the comparison (incorrect). Not every window is over
    on a loaded box (3 of 6 were, once): the rule does not need them all. A comparison can also end
    the judgement at its first window, before the rewriter, waiting for a core, ran much in it
    (CI, 2026-11-27: one window, 89 us, under two pytest workers): so every judgement must catch
    the cheat, and one of up to three must show the rewriter's CPU over the allowance."""
    seen = []
    for _ in range(3):
        v = _judge("cheat_36_out_rewrite")
        ev = v.evidence.get("check_bg_us", {})
        assert (v.status, v.rule) in {(Status.REJECTED, rules.THREADS), (Status.INCORRECT, rules.TOLERANCE),
                                      (Status.INCORRECT, rules.NONFINITE)}, describe(v)
        assert ev.get("enforced") and ev["windows"] >= 1, (describe(v), ev)
        # the rule, both ways: windows over enough reject at once, with the window check's message;
        # a rejection without them came from the timing phase's per-call background-CPU median
        by_windows = ev["over"] >= CHECK_BG_MIN_OVER and ev["over"] > CHECK_BG_OVER_SHARE * ev["windows"]
        assert by_windows == ("between the end of the call and its check" in v.message), (describe(v), ev)
        seen.append(ev)
        if ev["over"] >= 1 and ev["us"] > ev["allowed"]:
            return
    pytest.fail(f"no judgement's windows showed the rewriter over the allowance: {seen}")
