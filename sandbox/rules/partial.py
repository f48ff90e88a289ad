"""The ``partial`` rule set (``EvalConfig.rules``; KernelBench's default setting, most published
level-2 solutions): torch may compute beside the candidate's own kernels, but the candidate
must replace at least one compute op of the reference with its own code, on every call. Also the
``custom_share`` evidence every verdict with a profiled call gets, under either rule set.

What "replace" means, from what the judge observes (docs/evaluator.md, "Rule sets"):

* **trees, nested ops included**: every outermost op of a call with the ops nested under it. A
  tree counts once for each *family* of compute op in it, itself or nested (a fused op counts for
  what it fuses: ``addmm`` is matmul and add, ``_addmm_activation`` also relu). So an op whose name
  is one family but which computes others (``torch._addmm_activation`` runs the reference's relu)
  cannot pass for the candidate's kernel having replaced them. Families put spellings of one
  computation together (``linear``/``matmul``/``mm``/``addmm``... are ``matmul``; every
  convolution is ``conv``; an in-place ``relu_`` is ``relu``); an op of another namespace than
  ``aten`` is its own family (``mkldnn::_linear_pointwise``), so torch computing through a library
  namespace is torch computing something the reference does not.
* **the reference's side**: one profiled call of the eager model in the reference worker (the
  same ``profile`` request and summary the candidate gets, sandbox/rules/profsummary.py);
* **every counted call** of the candidate (warm-up, correctness, profiled, timed, re-check: the op
  counter's per-call trees, sandbox/rules/opcount.py) must be a strict sub-multiset of the reference's:
  every family torch computes is one the reference runs, at most as often
  (``custom_code.torch_compute`` otherwise), and at least one of the reference's is missing
  (``custom_code.no_replacement``). A candidate that runs its own GEMM on the profiled call only
  shows a second signature on its other calls and is judged on it.
* **its own code ran, on that call**: on CPU a function of the candidate's own extension was
  called inside ``forward`` (counted through the loaded module, sandbox/rules/ownhooks.py) or an op of
  its own namespace ran; a module that is loaded but never called is not enough
  (``custom_code.no_custom_kernel``). On CUDA, a kernel launch that is the candidate's own on the
  profiled call (sandbox/rules/profsummary.py: ``is_candidates_launch``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Protocol

from sandbox import rules
from sandbox.errors import ReferenceFailed, Reject
from sandbox.rules.atenops import is_compute, namespace
from sandbox.verdict import Status

if TYPE_CHECKING:
    from sandbox.config import EvalConfig
    from sandbox.intake.task import Task
    from sandbox.verdict import Verdict
    from sandbox.worker.session import WorkerSession


class Judging(Protocol):
    """What the ``partial`` rule set uses of the judgement in progress (sandbox/judge.py's ``Judge``
    has it): the task, config, verdict, the reference worker and the op counter's path."""

    v: Verdict
    task: Task
    cfg: EvalConfig
    ref: WorkerSession | None
    opcount_path: str | None


_FAMILIES = {
    "matmul": ("linear", "matmul", "mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "vdot",
               "einsum", "tensordot", "_addmm_activation", "mkldnn_linear", "inner", "chain_matmul", "addr"),
    "conv": ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
             "convolution", "_convolution", "cudnn_convolution", "cudnn_convolution_transpose",
             "mkldnn_convolution", "miopen_convolution", "conv_tbc", "_conv_depthwise2d",
             "_slow_conv2d_forward", "slow_conv3d", "slow_conv_transpose2d", "slow_conv_transpose3d",
             "convolution_overrideable", "conv_depthwise3d"),
    # torch's implementation ops under a public one (nested in its tree) name the same computation
    "relu": ("relu", "clamp_min"),
    "softmax": ("softmax", "_softmax", "_safe_softmax"),
    "log_softmax": ("log_softmax", "_log_softmax"),
    "layer_norm": ("layer_norm", "native_layer_norm"),
    "group_norm": ("group_norm", "native_group_norm"),
    "batch_norm": ("batch_norm", "_batch_norm_impl_index", "native_batch_norm", "_native_batch_norm_legit",
                   "_native_batch_norm_legit_no_training", "cudnn_batch_norm", "miopen_batch_norm"),
}
_FAMILY_OF = {name: fam for fam, names in _FAMILIES.items() for name in names}
# aten ops that fuse more than their family: each counts for every family it computes
_FUSED = {
    "addmm": ("matmul", "add"), "addmv": ("matmul", "add"), "addbmm": ("matmul", "add"),
    "baddbmm": ("matmul", "add"), "addr": ("matmul", "add"),
    "_addmm_activation": ("matmul", "add", "relu"),
}


def _aten_name(op: str) -> str:
    name = op.split("::", 1)[-1]
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    return name


def family(op: str) -> str:
    """``aten::addmm`` -> ``matmul``; ``aten::relu_`` -> ``relu``; ``aten::sum`` -> ``sum``;
    ``mkldnn::_linear_pointwise`` -> itself (another namespace is its own family)."""
    if namespace(op) not in ("aten", ""):
        return op
    name = _aten_name(op)
    return _FAMILY_OF.get(name, name)


def family_set(op: str) -> tuple[str, ...]:
    """Every family an op computes (a fused aten op: each of its parts)."""
    if namespace(op) in ("aten", ""):
        fused = _FUSED.get(_aten_name(op))
        if fused:
            return fused
    return (family(op),)


def families(ops: dict[str, int], own: frozenset[str] = frozenset()) -> Counter[str]:
    """The multiset of families of the compute ops in ``ops`` (name -> count), each op alone."""
    out: Counter[str] = Counter()
    for k, n in ops.items():
        if is_compute(k, own):
            for f in family_set(k):
                out[f] += int(n)
    return out


def tree_families(trees: dict[str, int], own: frozenset[str] = frozenset()) -> Counter[str]:
    """The multiset of families of op trees (``outer>nested,nested`` -> count, the op counter's
    and the profile summary's format): each tree once per family computed in it."""
    out: Counter[str] = Counter()
    for key, n in trees.items():
        outer, _, rest = key.partition(">")
        fams: set[str] = set()
        for name in [outer, *rest.split(",")]:
            if name and is_compute(name, own):
                fams.update(family_set(name))
        for f in fams:
            out[f] += int(n)
    return out


def own_ran(trees: dict[str, int], own_calls: bool, own: frozenset[str]) -> bool:
    """The candidate's own code ran in a call: a function of its extension was called, or an op of
    its own namespace ran."""
    if own_calls:
        return True
    return any(namespace(n) in own for key in trees for n in key.replace(">", ",").split(",") if n)


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


def counted_share(j: Judging, own_ns: int, fwd_ns: int) -> None:
    """``custom_share_counted``: host time inside the candidate's own extension functions over the
    forward's time, summed over every counted call (sandbox/rules/ownhooks.py); on CPU the time in its
    kernels, on CUDA the time spent launching them."""
    tot = j.v.evidence.setdefault("custom_share_counted", {"own_ns": 0, "forward_ns": 0})
    tot["own_ns"] += int(own_ns)
    tot["forward_ns"] += int(fwd_ns)
    if tot["forward_ns"] > 0:
        tot["share"] = round(min(1.0, tot["own_ns"] / tot["forward_ns"]), 4)
        tot["basis"] = ("host time in the candidate's own extension functions / forward's time, every counted call"
                        + (" (on a GPU: launch time, not device time)" if j.cfg.device.startswith("cuda") else ""))


def _fmt(c: Counter[str]) -> str:
    return ", ".join(f"{k} x{n}" if n > 1 else k for k, n in sorted(c.items())) or "none"


def reference_trees(j: Judging, seed: int) -> dict[str, int]:
    """The reference's op trees at the base profile: one profiled call of the eager model in the
    reference worker (the same request and summary the candidate gets)."""
    rep, _ = j.ref.request("profile", seed=seed, target="eager")
    if not rep.get("ok"):
        raise ReferenceFailed(f"{j.task.path}: the reference failed its profiled call on seed {seed}: "
                              f"{rep.get('error')}")
    return dict(rep.get("trees") or {})


def _judge_call(ref: Counter[str], cand: Counter[str], where: str, aten_ops: Any) -> None:
    extra, replaced = cand - ref, ref - cand
    if extra:
        raise Reject(Status.REJECTED, rules.TORCH_FALLBACK,
                     f"under --rules partial torch may compute only ops the reference runs; {where} ran "
                     f"{_fmt(extra)} beyond them (reference: {_fmt(ref)}; torch's ops there: {_fmt(cand)})",
                     aten_ops=aten_ops)
    if not replaced:
        raise Reject(Status.REJECTED, rules.NO_REPLACEMENT,
                     f"under --rules partial at least one compute op of the reference must be the candidate's own "
                     f"kernel; in {where} torch ran all of them ({_fmt(ref)})", aten_ops=aten_ops)


def check(j: Judging, seed: int, rep: dict[str, Any]) -> None:
    """The partial rule on the candidate's profiled call ``rep`` (raises Reject); the reference's
    families are kept for the checks of every counted call (``check_calls``)."""
    own = frozenset(rep.get("own_namespaces") or ())
    ref = tree_families(reference_trees(j, seed))
    cand = tree_families(rep.get("trees") or {}, own)
    j.v.evidence["partial"] = {"reference_ops": dict(ref), "torch_ops": dict(cand), "replaced": dict(ref - cand)}
    _judge_call(ref, cand, "the profiled call", rep.get("trees"))
    if not j.cfg.device.startswith("cuda") and not j.opcount_path:
        built_something(j)  # no op counter: the calls cannot be counted, the build is all there is


def built_something(j: Judging) -> None:
    """The fallback of "its own code ran" where calls cannot be counted (no op counter, or one
    built without Python.h): the candidate built or loaded an extension through the build cache."""
    build = j.v.evidence.get("build") or {}
    if not (int(build.get("builds") or 0) + int(build.get("cache_hits") or 0)):
        raise Reject(Status.REJECTED, rules.NO_CUSTOM_KERNEL,
                     "under --rules partial the candidate must run code of its own, but it built or loaded no "
                     "extension (load_inline / load)")


def check_calls(j: Judging, phase: str, rep: dict[str, Any]) -> None:
    """The partial rule on every counted call since the last report: each distinct per-call
    signature (op trees, whether the candidate's own code ran) against the reference's families."""
    ev = j.v.evidence.get("partial")
    calls = rep.get("calls") or []
    if ev is None:  # no profiled call yet: kept until the reference's families are known
        j.v.evidence.setdefault("partial_pending", []).extend(calls)
        return
    calls = j.v.evidence.pop("partial_pending", []) + calls
    if rep.get("calls_overflow"):
        raise Reject(Status.REJECTED, rules.TORCH_FALLBACK,
                     f"during the {phase} calls the torch ops inside forward changed from call to call more than the "
                     "judge keeps apart; under --rules partial every call is compared with the reference")
    ref = Counter(ev["reference_ops"])
    own = frozenset(rep.get("own_namespaces") or ())
    seen = ev.setdefault("calls", [])
    cpu = not j.cfg.device.startswith("cuda")
    counted = bool((rep.get("counter") or {}).get("py_hooks"))
    if cpu and calls and not counted:
        built_something(j)
    for c in calls:
        trees, n = dict(c.get("trees") or {}), int(c.get("n") or 0)
        cand = tree_families(trees, own)
        if len(seen) < 16:
            seen.append({"torch_ops": dict(cand), "own_code": bool(c.get("own")), "calls": n})
        where = f"{n} of the {phase} calls (counted on every call)"
        _judge_call(ref, cand, where, trees)
        if cpu and counted and not own_ran(trees, bool(c.get("own")), own):
            raise Reject(Status.REJECTED, rules.NO_CUSTOM_KERNEL,
                         f"under --rules partial the candidate's own code must run inside forward; in {where} no "
                         f"function of its own extension was called (torch ran {_fmt(cand)}; an extension loaded but "
                         "not called does not count)")
