"""harness leaderboard verify: re-judged numbers hold inside their recorded CI, or not."""

from __future__ import annotations

import pytest

from harness.leaderboard.build import build_leaderboard
from harness.leaderboard.collect import collect
from harness.leaderboard.verify import verify
from sandbox.verdict import Mode, Speedup, Status, Verdict


@pytest.fixture(scope="module")
def lb(filled_results):
    return build_leaderboard(collect([filled_results]), [str(filled_results)])


def judge_with(lookup, factor_by_op, status=Status.VALID):
    """An evaluator stand-in for a GPU we do not have: returns a final verdict whose speedup is
    the recorded one times a factor. Records what it was asked to judge."""
    calls = []

    def evaluate(task, source, config):
        calls.append((task.name, config.mode, config.device))
        f = factor_by_op.get(task.name, 1.0)
        base = lookup(source)
        v = base * f
        sp = Speedup("eager", v, v * 0.98, v * 1.02, 0.001, True)
        return Verdict(status=status, mode=Mode.FINAL, task=task.name, speedups={"eager": sp})

    evaluate.calls = calls
    return evaluate


@pytest.fixture(autouse=True)
def _pretend_cuda(monkeypatch):
    """The fixture's kernels were recorded on a GPU; the judge below stands in for it."""
    monkeypatch.setattr("harness.leaderboard.verify._cuda_available", lambda: True)


def test_numbers_within_the_recorded_ci_hold_and_others_differ(lb):
    evo = next(e for e in lb.entries if e.method == "evoengineer")
    sources = {
        o.best.source: o.best.speedups["eager"].value
        for o in evo.ops
        if o.best and o.best.final_status == "valid"
    }
    ev = judge_with(sources.__getitem__, {"relu": 1.0, "layer_norm": 3.0})
    rep = verify(lb, entries={evo.entry_id}, evaluate_fn=ev)
    rows = {r.op: r for r in rep.rows}
    assert rows["relu"].holds is True and rows["relu"].overlap is True
    assert rows["layer_norm"].holds is False and rows["layer_norm"].overlap is False
    assert all(mode is Mode.FINAL for _, mode, _ in ev.calls)
    assert {dev for _, _, dev in ev.calls} == {"cuda"}  # the recorded device by default
    assert "softmax" not in rows  # no valid kernel recorded: nothing to re-measure
    text = rep.text()
    assert "holds" in text and "DIFFERS" in text


def test_hardware_difference_is_reported_and_compared_anyway(lb):
    evo = next(e for e in lb.entries if e.method == "evoengineer")
    sources = {o.best.source: o.best.speedups["eager"].value for o in evo.ops if o.best}
    rep = verify(
        lb, entries={evo.entry_id}, ops={"relu"}, evaluate_fn=judge_with(sources.__getitem__, {})
    )
    assert rep.recorded_hardware == ("NVIDIA H200",)
    assert rep.hardware_differs  # this CI machine has no H200
    assert "hardware differs, comparing anyway" in rep.text()
    assert len(rep.rows) == 1 and rep.rows[0].holds is True
    assert rep.to_dict()["held"] == 1


def test_a_kernel_that_no_longer_passes_does_not_hold(lb):
    evo = next(e for e in lb.entries if e.method == "evoengineer")
    rep = verify(
        lb,
        entries={evo.entry_id},
        ops={"relu"},
        device="cpu",
        evaluate_fn=judge_with(lambda src: 1.0, {}, status=Status.INCORRECT),
    )
    (row,) = rep.rows
    assert row.holds is False and row.new_status == "incorrect" and row.new is None


def test_cuda_kernels_are_skipped_with_a_reason_on_a_machine_without_cuda(lb, monkeypatch):
    monkeypatch.setattr("harness.leaderboard.verify._cuda_available", lambda: False)
    evo = next(e for e in lb.entries if e.method == "evoengineer")

    def never(task, source, config):
        raise AssertionError("must not judge a CUDA kernel without CUDA")

    rep = verify(lb, entries={evo.entry_id}, ops={"relu"}, evaluate_fn=never)
    (row,) = rep.rows
    assert row.new_status == "skipped" and "no CUDA device here" in row.note and row.holds is None
