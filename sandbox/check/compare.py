"""Output checks: type/shape/dtype/device, tolerance, trivial outputs.

Pure functions over loaded tensors on any device. The trusted reference worker runs them
(sandbox/check/refcheck.py), next to its own outputs: on a GPU the comparison runs there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from sandbox import rules


@dataclass
class Comparison:
    passed: bool
    rule: str | None = None
    message: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatch_fraction: float | None = None
    # per output: the smallest t with |out-ref| <= t + t*|ref| everywhere (inf: no t passes)
    tightest_tol: list[float] | None = None
    fused: int = 0  # outputs whose float pass was the one-kernel pass (sandbox/check/fusedcompare.py)


def check_types(outs: Any, ref: list[torch.Tensor], devices: list[str], ref_devices: list[str]) -> Comparison:
    if not isinstance(outs, list) or len(outs) != len(ref):
        n = len(outs) if isinstance(outs, list) else "?"
        return Comparison(False, rules.OUTPUT_TYPE, f"forward returned {n} outputs; the reference returns {len(ref)}")
    for i, (o, r) in enumerate(zip(outs, ref, strict=True)):
        if type(o) is not torch.Tensor:
            return Comparison(False, rules.OUTPUT_TYPE, f"output {i} is a {type(o).__name__}, not a plain torch.Tensor")
        if o.shape != r.shape:
            return Comparison(False, rules.OUTPUT_TYPE, f"output {i} has shape {tuple(o.shape)}; expected {tuple(r.shape)}")
        if o.dtype != r.dtype:
            return Comparison(False, rules.OUTPUT_TYPE, f"output {i} has dtype {o.dtype}; expected {r.dtype}")
        if i < len(devices) and i < len(ref_devices) and devices[i] != ref_devices[i]:
            return Comparison(False, rules.OUTPUT_TYPE, f"output {i} is on {devices[i]}; expected {ref_devices[i]}")
    return Comparison(True)


def _is_constant(t: torch.Tensor) -> bool:
    if t.numel() <= 1:
        return False
    f = t.flatten()
    return bool(torch.equal(f, f[:1].expand_as(f)))


CHUNK = 1 << 20  # elements per step of the float comparison (8 MB float64 buffers)
CHUNK_CUDA = 1 << 25  # on a GPU: 256 MB buffers (a 6 GiB output is 48 steps)


@dataclass
class _FloatStats:
    abs_err: float = 0.0
    rel_err: float = 0.0
    n_bad: int = 0
    n_nonfinite: int = 0  # NaN/inf where the reference is finite
    n_special: int = 0  # non-finite reference values the candidate does not match exactly
    first_bad: int = -1  # flat index of the first element outside tolerance
    tightest: float = 0.0  # max |out-ref| / (1+|ref|): the smallest atol=rtol that passes; inf if none does
    masked: bool = False  # the pass with NaN/inf handling ran (some value of either tensor is not finite)
    fused: bool = False  # the one-kernel all-finite pass ran (sandbox/check/fusedcompare.py)


def _masked_chunk(oc, rc, d, t, atol: float, rtol: float):
    """One chunk of the rule where NaN/inf may occur: (bad, [max d, max tightest, max rel],
    [bad, nonfinite, special] counts), all on the device. ``d`` and ``t`` are scratch."""
    finite_r, finite_o = torch.isfinite(rc), torch.isfinite(oc)
    nonfinite = finite_r & ~finite_o
    # where the reference is not finite, the candidate must match it exactly (nan==nan, inf==inf)
    special = ~finite_r & ~((torch.isnan(rc) & torch.isnan(oc)) | (rc == oc))
    torch.sub(oc, rc, out=d).abs_()
    d.masked_fill_(~(finite_r & finite_o), 0.0)
    torch.abs(rc, out=t).mul_(rtol).add_(atol)
    t.masked_fill_(~finite_r, float("inf"))
    bad = (d > t) | nonfinite | special
    m0 = d.max()
    # atol=rtol=x passes iff d <= x*(1+|ref|): the tightest x is max d/(1+|ref|) (d is 0 where ref is not finite)
    torch.abs(rc, out=t).add_(1.0).masked_fill_(~finite_r, 1.0)
    m1 = torch.div(d, t, out=t).max()
    torch.abs(rc, out=t).clamp_(min=1e-12).masked_fill_(~finite_r, 1.0)  # d is 0 there: no NaN
    m2 = d.div_(t).max()
    return bad, torch.stack((m0, m1, m2)), torch.stack((bad.sum(), nonfinite.sum(), special.sum()))


def _finite_chunk(oc, rc, d, t, atol: float, rtol: float):
    """``_masked_chunk`` where every value of both is finite: the masks are no-ops there, so the
    same operations in the same order without them give the same bits. ``oc`` and ``rc`` are
    overwritten."""
    torch.sub(oc, rc, out=d).abs_()
    a = rc.abs_()
    torch.mul(a, rtol, out=t).add_(atol)
    bad = d > t
    m0 = d.max()
    m1 = torch.div(d, torch.add(a, 1.0, out=oc), out=oc).max()
    m2 = d.div_(a.clamp_(min=1e-12)).max()
    zero = torch.zeros((), dtype=torch.int64, device=d.device)
    return bad, torch.stack((m0, m1, m2)), torch.stack((bad.sum(), zero, zero))


def _all_finite(of: torch.Tensor, rf: torch.Tensor, chunk: int) -> bool:
    """Whether every value of both flat tensors is finite, a chunk at a time (no full-size
    temporary), with one host sync."""
    ok = torch.ones((), dtype=torch.bool, device=of.device)
    for s0 in range(0, of.numel(), chunk):
        ok &= torch.isfinite(of[s0:s0 + chunk]).all() & torch.isfinite(rf[s0:s0 + chunk]).all()
    return bool(ok)


def _float_stats(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float, chunk: int = CHUNK,
                 finite_pass: bool | None = None, fused: Any = None) -> _FloatStats:
    """The tolerance rule over real floating tensors, in float64, a chunk at a time.

    Same arithmetic as the whole-tensor formula (tests/evaluator/test_compare.py holds it as the
    oracle), but with a few reused float64 buffers instead of ten full-size temporaries: a 128 MB
    output took ~5 s on two cores that way, nearly all of it allocation and page faults. The
    running maxima and counts stay on the tensors' device until the end: one host sync per
    output, not eight per chunk (on a GPU the syncs were most of a 6 GiB output's check).
    ``fused`` (a sandbox/check/fusedcompare.Lib, on a GPU) runs the all-finite pass as one kernel
    with the same arithmetic where it takes the tensors; else, or where a value is not finite,
    the passes below run."""
    of, rf = o.reshape(-1), r.reshape(-1)
    if rf.device != of.device:
        rf = rf.to(of.device)
    n = of.numel()
    st = _FloatStats()
    if n == 0:
        return st
    if fused is not None and finite_pass is not False:
        got = fused.stats(of, rf, atol, rtol)
        if got is not None:
            (st.abs_err, st.tightest, st.rel_err), st.n_bad, st.first_bad = got
            st.fused = True
            return st
    dev = of.device
    k0 = min(chunk, n)
    bo, br, bd, bt = (torch.empty(k0, dtype=torch.float64, device=dev) for _ in range(4))
    # running: max abs err, max tightest, max rel err; counts: bad, nonfinite, special; first bad index
    mx = torch.zeros(3, dtype=torch.float64, device=dev)
    cnt = torch.zeros(3, dtype=torch.int64, device=dev)
    first = torch.full((), n, dtype=torch.int64, device=dev)
    # both all finite (nearly every output): the same arithmetic without the NaN/inf masks, about 20
    # kernels a chunk instead of 45 (one read of each in its own dtype and one host sync to know).
    # On a GPU by default (22 against 42 ms per GiB on the H200). A CPU check keeps its length: the
    # CPU rule timing.threads allows the candidate's other threads 5% of the window that holds the
    # check, and some honest kernels sit at that margin (sandbox/check/calls.py, session 26)
    if finite_pass is None:
        finite_pass = of.is_cuda
    st.masked = not (finite_pass and _all_finite(of, rf, chunk))
    step = _masked_chunk if st.masked else _finite_chunk
    for s0 in range(0, n, chunk):
        k = min(chunk, n - s0)
        oc, rc = bo[:k], br[:k]
        oc.copy_(of[s0:s0 + k])
        rc.copy_(rf[s0:s0 + k])
        bad, m, c = step(oc, rc, bd[:k], bt[:k], atol, rtol)
        torch.maximum(mx, m, out=mx)
        cnt += c
        # the first bad element of the chunk (argmax: the first maximal value), n where none is bad
        here = torch.where(bad.any(), bad.to(torch.uint8).argmax() + s0, n)
        torch.minimum(first, here, out=first)
    (st.abs_err, st.tightest, st.rel_err), (st.n_bad, st.n_nonfinite, st.n_special) = mx.tolist(), cnt.tolist()
    st.first_bad = int(first) if st.n_bad else -1
    if st.n_nonfinite or st.n_special:
        st.tightest = float("inf")
    return st


def compare(outs: list[torch.Tensor], ref: list[torch.Tensor], atol: float, rtol: float,
            fused: Any = None) -> Comparison:
    """Pass iff every |out-ref| <= atol + rtol*|ref| and no NaN/inf where ref is finite.

    Every output is measured, also after a failing one: ``tightest_tol`` holds, per output, the
    smallest atol=rtol it would pass (0 for an exact match; inf for a NaN/inf mismatch or an
    integer output that differs, which no tolerance excuses). The first failure decides.
    ``fused``: the one-kernel float pass for outputs on a GPU (``_float_stats``)."""
    worst_abs = worst_rel = worst_frac = 0.0
    n_fused = 0
    tightest: list[float] = []
    fail: Comparison | None = None
    for i, (o, r) in enumerate(zip(outs, ref, strict=True)):
        if r.device != o.device:
            r = r.to(o.device)
        if not (o.dtype.is_floating_point or o.dtype.is_complex):
            bad = o != r
            frac = float(bad.float().mean()) if bad.numel() else 0.0
            differ = bool(bad.any())
            tightest.append(float("inf") if differ else 0.0)
            if differ and fail is None:
                fail = Comparison(False, rules.TOLERANCE, f"output {i}: {frac:.1%} of elements differ", None, None, frac)
            continue
        if torch.equal(o, r):  # equal everywhere (no NaN then): every statistic is 0, as the full pass finds;
            tightest.append(0.0)  # one read of both, where the float64 pass reads and writes ~40 times
            continue
        if o.dtype.is_complex:  # compare real and imaginary parts as real tensors
            o, r = torch.view_as_real(o.resolve_conj()), torch.view_as_real(r.resolve_conj())
        st = _float_stats(o, r, atol, rtol, CHUNK_CUDA if o.is_cuda else CHUNK, fused=fused)
        n_fused += st.fused
        tightest.append(st.tightest)
        abs_err, rel_err = st.abs_err, st.rel_err
        frac = st.n_bad / max(o.numel(), 1)
        worst_abs, worst_rel, worst_frac = max(worst_abs, abs_err), max(worst_rel, rel_err), max(worst_frac, frac)
        if fail is not None:
            continue
        if st.n_nonfinite:
            fail = Comparison(False, rules.NONFINITE,
                              f"output {i}: {st.n_nonfinite} NaN/inf values where the reference is finite",
                              abs_err, rel_err, frac)
        elif st.n_bad:
            idx = st.first_bad
            got, exp = float(o.reshape(-1)[idx]), float(r.reshape(-1)[idx])
            fail = Comparison(False, rules.TOLERANCE,
                              f"output {i}: {frac:.2%} of elements outside atol={atol:g} rtol={rtol:g}; "
                              f"max abs err {abs_err:.3g}, first mismatch at flat index {idx}: "
                              f"got {got:.6g}, expected {exp:.6g}",
                              abs_err, rel_err, frac)
    if fail is not None:
        fail.tightest_tol, fail.fused = tightest, n_fused
        return fail
    return Comparison(True, None, "", worst_abs, worst_rel, worst_frac, tightest, n_fused)


def trivial(outs: list[torch.Tensor], ref: list[torch.Tensor]) -> str | None:
    """A reason when the candidate's output is constant while the reference's is not."""
    for i, (o, r) in enumerate(zip(outs, ref, strict=True)):
        if _is_constant(o) and not _is_constant(r):
            return f"output {i} is constant ({float(o.flatten()[0]) if o.numel() else 'empty'}) while the reference's is not"
    return None
