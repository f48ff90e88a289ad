"""Tolerance evidence: the tightest atol=rtol an output passes (sandbox/check/compare.py), checked
against a brute-force float64 computation, its aggregate in the verdict (sandbox/verdict.py),
and end to end with the real evaluator: a candidate ~1e-3 off is incorrect at fp32's 1e-4 but
is reported as passing KernelBench v0.1's 1e-2."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from harness.cli.eval import summary
from sandbox.check import compare
from sandbox.verdict import Status, Trial, Verdict, tolerance_evidence
from tests.evaluator.conftest import run

RELU = Path(__file__).resolve().parents[1] / "adversarial" / "tasks" / "relu.py"


def brute_tightest(o: torch.Tensor, r: torch.Tensor) -> float:
    """max over elements of |o-r| / (1+|r|), element by element in Python floats; inf where no
    tolerance passes (NaN/inf against a finite reference, an unmatched non-finite reference)."""
    if o.dtype.is_complex:
        o, r = torch.view_as_real(o), torch.view_as_real(r)
    worst = 0.0
    for a, b in zip(o.double().flatten().tolist(), r.double().flatten().tolist(), strict=True):
        if math.isfinite(b):
            worst = max(worst, abs(a - b) / (1 + abs(b)) if math.isfinite(a) else math.inf)
        elif not (a == b or (math.isnan(a) and math.isnan(b))):
            worst = math.inf
    return worst


def _pair(seed: int, n: int, dtype: torch.dtype, scale: float):
    g = torch.Generator().manual_seed(seed)
    r64 = torch.randn(n, generator=g, dtype=torch.float64) * torch.logspace(-4, 3, n, dtype=torch.float64)
    o64 = r64 * (1 + scale * torch.randn(n, generator=g, dtype=torch.float64)) + scale * torch.randn(
        n, generator=g, dtype=torch.float64)
    return o64.to(dtype), r64.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("chunk", [1, 97, 1 << 20])
def test_tightest_equals_brute_force(dtype, chunk):
    o, r = _pair(3, 2001, dtype, 1e-3)
    st = compare._float_stats(o, r, 1e-4, 1e-4, chunk=chunk)
    assert st.tightest == pytest.approx(brute_tightest(o, r), rel=1e-12)
    assert st.tightest > 0


def test_complex_outputs_use_real_and_imaginary_parts():
    o, r = _pair(5, 1000, torch.float32, 1e-3)
    oc, rc = torch.complex(o, o.flip(0)), torch.complex(r, r.flip(0))
    c = compare.compare([oc], [rc], 1e-4, 1e-4)
    assert c.tightest_tol == [pytest.approx(brute_tightest(oc, rc), rel=1e-12)]


@pytest.mark.parametrize("case", ["nan_out", "inf_out", "ref_nan_matched", "ref_inf_matched",
                                  "ref_nan_unmatched", "ref_inf_wrong_sign"])
def test_non_finite_values(case):
    r = torch.linspace(-3, 3, 101)
    o = r * (1 + 1e-3)
    if case == "nan_out":
        o[10] = float("nan")
    elif case == "inf_out":
        o[10] = float("inf")
    elif case == "ref_nan_matched":
        r[10] = o[10] = float("nan")
    elif case == "ref_inf_matched":
        r[10] = o[10] = float("-inf")
    elif case == "ref_nan_unmatched":
        r[10] = float("nan")
    else:
        r[10], o[10] = float("inf"), float("-inf")
    expected = brute_tightest(o, r)
    assert math.isinf(expected) == (case not in ("ref_nan_matched", "ref_inf_matched"))
    for chunk in (1, 7, 1 << 20):
        assert compare._float_stats(o, r, 1e-4, 1e-4, chunk=chunk).tightest == pytest.approx(expected, rel=1e-12)


def test_the_tightest_tolerance_is_the_boundary_of_the_rule():
    o, r = _pair(7, 5000, torch.float32, 1e-3)
    (t,) = compare.compare([o], [r], 1e-4, 1e-4).tightest_tol
    assert not compare.compare([o], [r], 1e-4, 1e-4).passed
    assert compare.compare([o], [r], t * (1 + 1e-9), t * (1 + 1e-9)).passed
    assert not compare.compare([o], [r], t * (1 - 1e-6), t * (1 - 1e-6)).passed


def test_every_output_is_measured_also_after_a_failing_one():
    r = torch.linspace(1, 2, 100)
    ints = torch.arange(10)
    c = compare.compare([r * 1.01, r, ints + 1, ints], [r, r, ints, ints], 1e-4, 1e-4)
    assert not c.passed and "output 0" in c.message
    assert c.tightest_tol[0] == pytest.approx(brute_tightest(r * 1.01, r), rel=1e-12)
    assert c.tightest_tol[1:] == [0.0, math.inf, 0.0]  # integers: exact or no tolerance at all
    assert compare.compare([r, ints], [r, ints], 1e-4, 1e-4).tightest_tol == [0.0, 0.0]


def test_verdict_aggregate_and_old_json():
    trials = [Trial(0, "small", True, 1e-5, 2e-5, 0.0, "", [1e-5, 0.0]),
              Trial(1, "small", False, 3e-3, 4e-3, 0.5, "off", [3e-3, 0.0])]
    ev = tolerance_evidence(trials, 1e-4, 1e-4)
    assert ev["tightest"] == 3e-3 and ev["tightest_per_output"] == [3e-3, 0.0] and ev["passes_1e-2"] is True
    assert (ev["max_abs_err"], ev["max_rel_err"], ev["atol"], ev["trials"]) == (3e-3, 4e-3, 1e-4, 2)
    trials.append(Trial(2, "small", False, 0.0, 0.0, 0.1, "nan", [None, 0.0]))
    ev = tolerance_evidence(trials, 1e-4, 1e-4)
    assert ev["tightest"] is None and ev["passes_1e-2"] is False
    assert tolerance_evidence([Trial(0, "small", True)], 1e-4, 1e-4) == {}  # nothing measured
    v = Verdict(status=Status.INCORRECT, trials=trials, tolerance=ev)
    assert Verdict.from_json(v.to_json(allow_nan=False)) == v
    old = json.loads(v.to_json())
    del old["tolerance"]
    for t in old["trials"]:
        del t["tightest_tol"]
    back = Verdict.from_dict(old)  # a verdict written before these fields
    assert back.tolerance == {} and back.trials[0].tightest_tol == []
    assert "tolerance:" not in summary(back)


FORWARD = '''
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}
'''


def test_a_candidate_off_by_1e3_fails_1e4_but_passes_kernelbench_1e2():
    v = run(FORWARD.format(body="torch.relu(x) * (1 + 1e-3)"), task=RELU, allow_torch_ops=True)
    assert v.status is Status.INCORRECT, v.message
    tol = v.tolerance
    assert tol["passes_1e-2"] is True and (tol["atol"], tol["rtol"]) == (1e-4, 1e-4)
    assert 5e-4 < tol["tightest"] <= 1.001e-3  # 1e-3 * |x| / (1 + |x|), |x| up to ~15
    assert tol["max_rel_err"] == pytest.approx(1e-3, rel=1e-3)
    assert v.trials[-1].tightest_tol == [tol["tightest"]]
    line = next(ln for ln in summary(v).splitlines() if ln.startswith("tolerance:"))
    assert "passes KernelBench v0.1's 1e-2: yes" in line
    assert Verdict.from_json(v.to_json()).tolerance == tol


def test_an_exact_candidate_is_valid_with_tightest_zero():
    v = run(FORWARD.format(body="torch.relu(x)"), task=RELU, allow_torch_ops=True)
    assert v.status is Status.VALID, v.message
    assert v.tolerance["tightest"] == 0.0 and v.tolerance["passes_1e-2"] is True
    assert v.tolerance["trials"] == len(v.trials) and all(t.tightest_tol == [0.0] for t in v.trials)
    assert "passes atol=rtol >= 0;" in summary(v)
