"""The ``partial`` rule set (``EvalConfig.rules``; KernelBench's default setting, most published
level-2 solutions): torch may compute beside the candidate's own kernels, but the candidate
must replace at least one compute op of the reference with its own code. Also the
``custom_share`` evidence every verdict with a profiled call gets, under either rule set.

What "replace" means, from what the judge observes (docs/evaluator.md, "Rule sets"):

* both workers run one profiled call at the base profile (the same ``profile`` request,
  sandbox/profsummary.py); each side's *outer compute ops* are the aten ops outside the
  allocation/view/copy allowlist with no such op above them: what the forward itself asked
  torch to compute, whatever that decomposes into;
* op names are put in families so that spellings of one computation compare equal
  (``linear``/``matmul``/``mm``/``addmm``... are ``matmul``; every convolution is ``conv``; an
  in-place ``relu_`` is ``relu``);
* the candidate's multiset must be a strict sub-multiset of the reference's: every torch
  compute op it runs is one the reference runs (as many times at most), and at least one of
  the reference's is missing (``custom_code.no_replacement`` otherwise; an op the reference
  does not run is ``custom_code.torch_compute``);
* and the candidate ran code of its own: on CUDA a kernel launch with no aten op above it, on
  CPU an extension it built or loaded through the build cache (the profiler cannot see a call
  into native code on the host) -> ``custom_code.no_custom_kernel`` otherwise.

The aten-op counter (sandbox/opcount.py) still runs on every call: under ``partial`` every op it
counts must be in a family the profiled call ran, so a candidate that uses its own kernel only
while profiled is still caught (``custom_code.torch_compute``, "counted on every call").
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from sandbox import rules
from sandbox.atenops import is_compute
from sandbox.errors import ReferenceFailed, Reject
from sandbox.verdict import Status

if TYPE_CHECKING:
    from sandbox.judge import Judge

_FAMILIES = {
    "matmul": ("linear", "matmul", "mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "vdot",
               "einsum", "tensordot", "_addmm_activation", "mkldnn_linear", "inner", "chain_matmul"),
    "conv": ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
             "convolution", "_convolution", "cudnn_convolution", "cudnn_convolution_transpose",
             "mkldnn_convolution", "miopen_convolution", "conv_tbc", "_conv_depthwise2d",
             "_slow_conv2d_forward", "slow_conv3d", "slow_conv_transpose2d", "slow_conv_transpose3d",
             "convolution_overrideable", "conv_depthwise3d"),
}
_FAMILY_OF = {name: fam for fam, names in _FAMILIES.items() for name in names}


def family(op: str) -> str:
    """``aten::addmm`` -> ``matmul``; ``aten::relu_`` -> ``relu``; ``aten::sum`` -> ``sum``."""
    name = op.split("::", 1)[-1]
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    return _FAMILY_OF.get(name, name)


def families(ops: dict[str, int]) -> Counter[str]:
    """The multiset of families of the compute ops in ``ops`` (name -> count)."""
    out: Counter[str] = Counter()
    for k, n in ops.items():
        if is_compute(k):
            out[family(k)] += int(n)
    return out


def custom_share(rep: dict[str, Any], cuda: bool) -> dict[str, Any]:
    """The share of the profiled call spent in the candidate's own code: on CUDA, device time of
    kernels launched with no aten op above them over all kernels' (the worker's marker kernel
    excluded; kernels whose launch the profiler did not link count as not the candidate's); on
    CPU, the forward's host time outside outermost aten ops over the forward's host time (its
    Python counts as its own). Empty when the call gave nothing to measure."""
    if cuda:
        ku = rep.get("kernel_us") or {}
        total = sum(float(v) for v in ku.values())
        if total <= 0:
            return {}
        return {"custom_share": round(float(ku.get("custom", 0.0)) / total, 4),
                "custom_share_basis": "device time of the candidate's own kernels / all kernels (profiled call)"}
    call_us = float(rep.get("ns") or 0) / 1e3
    if call_us <= 0:
        return {}
    own = max(0.0, call_us - float(rep.get("aten_us") or 0.0))
    return {"custom_share": round(min(1.0, own / call_us), 4),
            "custom_share_basis": "host time outside torch ops / forward's host time (profiled call, CPU)"}


def _fmt(c: Counter[str]) -> str:
    return ", ".join(f"{k} x{n}" if n > 1 else k for k, n in sorted(c.items())) or "none"


def reference_ops(j: Judge, seed: int) -> dict[str, int]:
    """The reference's outer compute ops at the base profile: one profiled call of the eager
    model in the reference worker (the same request and summary the candidate gets)."""
    rep, _ = j.ref.request("profile", seed=seed, target="eager")
    if not rep.get("ok"):
        raise ReferenceFailed(f"{j.task.path}: the reference failed its profiled call on seed {seed}: "
                              f"{rep.get('error')}")
    return dict(rep.get("outer_compute") or {})


def check(j: Judge, seed: int, rep: dict[str, Any]) -> None:
    """The partial rule on the candidate's profiled call ``rep`` (raises Reject)."""
    ref = families(reference_ops(j, seed))
    cand = families(rep.get("outer_compute") or {})
    extra, replaced = cand - ref, ref - cand
    j.v.evidence["partial"] = {"reference_ops": dict(ref), "torch_ops": dict(cand), "replaced": dict(replaced)}
    if extra:
        raise Reject(Status.REJECTED, rules.TORCH_FALLBACK,
                     f"under --rules partial torch may compute only ops the reference runs; the forward ran "
                     f"{_fmt(extra)} beyond them (reference: {_fmt(ref)}; forward's torch ops: {_fmt(cand)})",
                     aten_ops=rep.get("outer_compute"))
    if not replaced:
        raise Reject(Status.REJECTED, rules.NO_REPLACEMENT,
                     f"under --rules partial at least one compute op of the reference must be the candidate's own "
                     f"kernel; torch ran all of them ({_fmt(ref)})", aten_ops=rep.get("outer_compute"))
    if j.cfg.device.startswith("cuda"):
        return  # the own-launch check follows in customcode, as under strict
    build = j.v.evidence.get("build") or {}
    if not (int(build.get("builds") or 0) + int(build.get("cache_hits") or 0)):
        raise Reject(Status.REJECTED, rules.NO_CUSTOM_KERNEL,
                     f"under --rules partial the candidate must run code of its own: torch did not run "
                     f"{_fmt(replaced)}, but the candidate built or loaded no extension (load_inline / load)")


def check_counts(j: Judge, phase: str, total: dict[str, int]) -> None:
    """Every compute op counted on any call so far is in a family the profiled call ran."""
    prof = j.v.profile.get("aten_ops")
    if prof is None:  # no profiled call yet: the totals are checked at the next report
        return
    seen = set(families(prof))
    bad = sorted({k for k in total if is_compute(k) and family(k) not in seen})
    if bad:
        raise Reject(Status.REJECTED, rules.TORCH_FALLBACK,
                     f"torch computed {', '.join(bad[:8])} inside forward during the {phase} calls (counted on every "
                     "call) but not in the profiled call: under --rules partial the torch ops must be the same on "
                     "every call", aten_ops={k: total[k] for k in bad})
