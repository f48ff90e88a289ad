"""The timing lead (sandbox/timing/measure.py): sized from the trusted baselines' host enqueue time,
bounded, overridable for experiments, and never used with host timers."""

from __future__ import annotations

import pytest

from sandbox.timing import measure as timing
from sandbox.verdict import Status
from tests.evaluator.conftest import TORCH_ADD, run


def test_lead_covers_twice_the_slowest_baseline_enqueue(monkeypatch):
    monkeypatch.delenv("KH_TIMING_LEAD_US", raising=False)
    assert timing.lead_us([30.0, 80.0, 55.0]) == pytest.approx(2 * 80.0 + timing.LEAD_EXTRA_US)


def test_lead_is_bounded(monkeypatch):
    monkeypatch.delenv("KH_TIMING_LEAD_US", raising=False)
    assert timing.lead_us([1.0]) == timing.LEAD_MIN_US
    assert timing.lead_us([50_000.0]) == timing.LEAD_MAX_US  # a stalled host cannot buy a long spin
    assert timing.lead_us([]) == timing.LEAD_DEFAULT_US


def test_lead_can_be_forced_for_experiments(monkeypatch):
    monkeypatch.setenv("KH_TIMING_LEAD_US", "0")
    assert timing.lead_us([80.0]) == 0.0
    monkeypatch.setenv("KH_TIMING_LEAD_US", "250")
    assert timing.lead_us([80.0]) == 250.0


def test_cpu_verdict_records_no_lead_and_the_enqueue_times():
    v = run(TORCH_ADD, allow_torch_ops=True)
    assert v.status is Status.VALID, v.message
    e = v.evidence["enqueue_us"]
    assert e["lead_us"] == 0.0  # host timers: nothing to run ahead of
    assert set(e["median"]) == {"candidate", "eager"} and all(x > 0 for x in e["median"].values())
