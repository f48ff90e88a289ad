"""sandbox/check/compare.py's chunked tolerance check against the whole-tensor formula (the oracle),
on outputs with NaN, inf, tiny and large values, for chunk sizes that split them unevenly."""

from __future__ import annotations

import pytest
import torch

from sandbox import rules
from sandbox.check import compare


def oracle(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float):
    o64, r64 = o.double().flatten(), r.double().flatten()
    finite = torch.isfinite(r64)
    nonfinite_bad = finite & ~torch.isfinite(o64)
    ref_special_bad = ~finite & ~((torch.isnan(r64) & torch.isnan(o64)) | (r64 == o64))
    diff = (o64 - r64).abs()
    diff = torch.where(finite & torch.isfinite(o64), diff, torch.zeros_like(diff))
    tol = atol + rtol * r64.abs()
    bad = (diff > torch.where(finite, tol, torch.full_like(tol, float("inf")))) | nonfinite_bad | ref_special_bad
    # relative error over the elements where both are finite (a NaN reference gives 0, not NaN)
    rel = diff / torch.where(finite, r64.abs().clamp_min(1e-12), torch.ones_like(r64))
    first = int(bad.nonzero()[0]) if bad.any() else -1
    return float(diff.max()), float(rel.max()), int(bad.sum()), int(nonfinite_bad.sum()), first


def make(seed: int, n: int, specials: bool = True):
    g = torch.Generator().manual_seed(seed)
    r = torch.randn(n, generator=g) * torch.logspace(-6, 3, n).roll(seed)
    o = r + torch.randn(n, generator=g) * 1e-5
    k = max(1, n // 50)
    idx = torch.randperm(n, generator=g)
    if not specials:  # all finite: the pass without NaN/inf masks (compare._finite_chunk)
        o[idx[3 * k:4 * k]] += 1.0
        o[idx[4 * k:5 * k]] = r[idx[4 * k:5 * k]] * (1 + 1e-4) + 1e-4  # on the tolerance's edge
        return o, r
    r[idx[:k]] = float("nan")
    o[idx[:k // 2]] = float("nan")  # half of the reference NaNs matched
    r[idx[k:2 * k]] = float("inf")
    o[idx[k:k + k // 2]] = float("inf")
    o[idx[2 * k:3 * k]] = float("-inf")  # non-finite where the reference is finite
    o[idx[3 * k:4 * k]] += 1.0  # plainly outside tolerance
    return o, r


@pytest.mark.parametrize("specials", [True, False], ids=["nan-inf", "finite"])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk", [1, 7, 1000, 1 << 20])
def test_chunked_statistics_equal_the_whole_tensor_formula(seed, chunk, specials):
    o, r = make(seed, 3001, specials)
    st = compare._float_stats(o, r, 1e-4, 1e-4, chunk=chunk, finite_pass=True)  # a GPU's default, here on CPU
    abs_err, rel_err, n_bad, n_nonfinite, first = oracle(o, r, 1e-4, 1e-4)
    assert st.masked is specials  # each pass measured: the masked one and the all-finite one
    assert n_bad > 0 and (st.n_bad, st.n_nonfinite, st.first_bad) == (n_bad, n_nonfinite, first)
    assert st.abs_err == pytest.approx(abs_err, rel=0, abs=0)
    assert st.rel_err == pytest.approx(rel_err, rel=1e-12)
    assert compare._float_stats(o, r, 1e-4, 1e-4, chunk=chunk).masked  # on CPU by default: the masked pass
    if not specials:  # the smallest atol=rtol that passes, bit for bit
        o64, r64 = o.double(), r.double()
        assert st.tightest == float(((o64 - r64).abs() / (r64.abs() + 1.0)).max())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("specials", [True, False], ids=["nan-inf", "finite"])
def test_on_the_gpu_both_passes_equal_the_whole_tensor_formula(specials):
    """Where the reference worker compares (its outputs on the GPU): the same oracle, the chunks
    CUDA-sized and split unevenly."""
    o, r = make(5, 300_001, specials)
    st = compare._float_stats(o.cuda(), r.cuda(), 1e-4, 1e-4, chunk=65_537)
    abs_err, rel_err, n_bad, n_nonfinite, first = oracle(o, r, 1e-4, 1e-4)
    assert st.masked is specials
    assert (st.n_bad, st.n_nonfinite, st.first_bad, st.abs_err) == (n_bad, n_nonfinite, first, abs_err)
    assert st.rel_err == pytest.approx(rel_err, rel=1e-12)


def test_verdicts_name_the_rule_and_the_first_mismatch():
    r = torch.linspace(1, 2, 10_000)
    o = r.clone()
    assert compare.compare([o], [r], 1e-4, 1e-4).passed
    o[7777] += 0.01
    c = compare.compare([o], [r], 1e-4, 1e-4)
    assert not c.passed and c.rule == rules.TOLERANCE and "flat index 7777" in c.message
    o[123] = float("nan")
    c = compare.compare([o], [r], 1e-4, 1e-4)
    assert c.rule == rules.NONFINITE and "1 NaN/inf" in c.message


def test_complex_outputs_compare_both_parts():
    r = torch.randn(100, dtype=torch.complex64)
    o = r.clone()
    o[5] = complex(float(r[5].real), float(r[5].imag) + 0.5)  # only the imaginary part is wrong
    assert not compare.compare([o], [r], 1e-4, 1e-4).passed
    assert compare.compare([r.clone()], [r], 1e-4, 1e-4).passed


def test_integer_outputs_must_be_equal():
    r = torch.arange(10)
    assert compare.compare([r.clone()], [r], 0, 0).passed
    assert not compare.compare([r + (r == 3)], [r], 0, 0).passed


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.complex64])
def test_an_exact_match_skips_the_float64_pass_with_the_same_statistics(dtype):
    """compare()'s fast path (torch.equal) must report what the full pass reports: zeros."""
    g = torch.Generator().manual_seed(3)
    r = torch.randn(5000, generator=g).to(dtype)
    r[:3] = torch.tensor([float("inf"), float("-inf"), -0.0]).to(dtype)
    o = r.clone()
    o[2] = 0.0  # -0.0 and +0.0 are equal for both paths
    c = compare.compare([o], [r], 1e-4, 1e-4)
    assert c.passed and (c.max_abs_err, c.max_rel_err, c.mismatch_fraction, c.tightest_tol) == (0.0, 0.0, 0.0, [0.0])
    ro, rr = (torch.view_as_real(x) for x in (o, r)) if dtype.is_complex else (o, r)
    st = compare._float_stats(ro, rr, 1e-4, 1e-4)
    assert (st.abs_err, st.rel_err, st.n_bad, st.tightest) == (0.0, 0.0, 0, 0.0)
    o[7] = o[7] + 1  # one element off: the full pass runs and finds it
    assert not compare.compare([o], [r], 1e-4, 1e-4).passed
