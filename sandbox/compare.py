"""Parent-side output checks: type/shape/dtype/device, tolerance, trivial outputs.

Pure functions over tensors already loaded in the parent (``torch.load(weights_only=True)``).
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


def compare(outs: list[torch.Tensor], ref: list[torch.Tensor], atol: float, rtol: float) -> Comparison:
    """Pass iff every |out-ref| <= atol + rtol*|ref| and no NaN/inf where ref is finite."""
    worst_abs = worst_rel = worst_frac = 0.0
    for i, (o, r) in enumerate(zip(outs, ref, strict=True)):
        if not (o.dtype.is_floating_point or o.dtype.is_complex):
            bad = o != r
            frac = float(bad.float().mean()) if bad.numel() else 0.0
            if bad.any():
                return Comparison(False, rules.TOLERANCE, f"output {i}: {frac:.1%} of elements differ", None, None, frac)
            continue
        o64, r64 = o.double(), r.double()
        finite = torch.isfinite(r64)
        nonfinite_bad = finite & ~torch.isfinite(o64)
        # where the reference is not finite, the candidate must match it exactly (nan==nan, inf==inf)
        ref_special_bad = ~finite & ~((torch.isnan(r64) & torch.isnan(o64)) | (r64 == o64))
        diff = (o64 - r64).abs()
        diff = torch.where(finite & torch.isfinite(o64), diff, torch.zeros_like(diff))
        tol = atol + rtol * r64.abs()
        bad = (diff > torch.where(finite, tol, torch.full_like(tol, float("inf")))) | nonfinite_bad | ref_special_bad
        n = max(bad.numel(), 1)
        abs_err = float(diff.max()) if diff.numel() else 0.0
        rel = diff / r64.abs().clamp_min(1e-12)
        rel_err = float(rel.max()) if rel.numel() else 0.0
        frac = float(bad.sum()) / n
        worst_abs, worst_rel, worst_frac = max(worst_abs, abs_err), max(worst_rel, rel_err), max(worst_frac, frac)
        if bool(nonfinite_bad.any()):
            return Comparison(False, rules.NONFINITE,
                              f"output {i}: {int(nonfinite_bad.sum())} NaN/inf values where the reference is finite",
                              abs_err, rel_err, frac)
        if bool(bad.any()):
            idx = int(bad.flatten().nonzero()[0])
            return Comparison(False, rules.TOLERANCE,
                              f"output {i}: {frac:.2%} of elements outside atol={atol:g} rtol={rtol:g}; "
                              f"max abs err {abs_err:.3g}, first mismatch at flat index {idx}: "
                              f"got {float(o64.flatten()[idx]):.6g}, expected {float(r64.flatten()[idx]):.6g}",
                              abs_err, rel_err, frac)
    return Comparison(True, None, "", worst_abs, worst_rel, worst_frac)


def trivial(outs: list[torch.Tensor], ref: list[torch.Tensor], inputs_like: bool = False) -> str | None:
    """A reason when the candidate's output is constant while the reference's is not."""
    for i, (o, r) in enumerate(zip(outs, ref, strict=True)):
        if _is_constant(o) and not _is_constant(r):
            return f"output {i} is constant ({float(o.flatten()[0]) if o.numel() else 'empty'}) while the reference's is not"
    return None
