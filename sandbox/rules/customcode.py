"""The custom-code rule (#2, #3): the candidate computes with code it brings; torch may only
allocate, view and copy (``--rules strict``; ``--rules partial`` is sandbox/rules/partial.py). The
evidence, all read by the judge:

* the profiled call (``custom_code``): the ops, kernel launches and streams of one call under
  ``torch.profiler``; on CUDA at least one launch must be the candidate's own and every kernel
  must run on the timing stream;
* the op counter (sandbox/rules/opcount.py), armed inside ``forward`` on every call and read with each
  monitor report: every op of every namespace (``mkldnn::``, ``quantized::``... compute too), the
  per-call op trees, calls into the candidate's own extension functions and into numpy and its
  bridges (``custom_code.library_compute``), and whether the counting itself was left working
  (``custom_code.counter_disabled``: the probe, the tripwires of sandbox/rules/tripwires.py);
* the link check (sandbox/rules/linkcheck.py) of every shared object the candidate brought in: torch
  kernels below the dispatcher, compute libraries, the RecordFunction switches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from sandbox import rules
from sandbox.errors import Reject
from sandbox.rules import kernelowners, partial, tripwires
from sandbox.rules.atenops import ALLOWED_ATEN, disallowed  # noqa: F401 (re-exported)
from sandbox.verdict import Status

if TYPE_CHECKING:
    from sandbox.config import EvalConfig
    from sandbox.intake.task import Task
    from sandbox.verdict import Trial, Verdict
    from sandbox.worker.session import WorkerSession


class Judging(Protocol):
    """What the custom-code rule uses of the judgement in progress (sandbox/judge.py's ``Judge`` has
    it): the config, the verdict, the op counter's path, and the calls and checks of
    sandbox/check/calls.py. The rule's helpers (kernelowners, partial) take the same object."""

    v: Verdict
    task: Task
    source: str
    cfg: EvalConfig
    ref: WorkerSession | None
    cand: WorkerSession | None
    tier: Any
    opcount_path: str | None

    def call_bound(self, floor: float = ..., scale: float = 1.0) -> tuple[float, str]: ...

    def cand_call(self, seed: int, op: str = "call", bound: tuple[float, str] | None = None,
                  target: str = "candidate", **extra: Any) -> tuple[dict[str, Any], int]: ...

    def check_against(self, seed: int, label: str, index: int, rule_fail: str | None = None,
                      ref_ready: bool = False, keep: str | None = None) -> Trial: ...


# link-check category -> (rule, what it means, refused under partial too)
_LINKED = {
    "record_function": (rules.COUNTER_DISABLED, "switches RecordFunction (the op counter) off or removes its callbacks",
                        True),
    "below_dispatcher": (rules.TORCH_FALLBACK, "calls torch kernels below the dispatcher, where no op is counted",
                         True),
    "library": (rules.LIBRARY_COMPUTE, "calls a compute library's entry points (BLAS, cuBLAS, cuDNN, oneDNN, MKL)",
                True),
    "op_call": (rules.TORCH_FALLBACK, "calls torch compute ops (at::_ops::<op>::call)", False),
}


def _names_in_trees(trees: dict[str, int]) -> set[str]:
    return {n for key in trees for n in key.replace(">", ",").split(",") if n}


def check_profiled_call(j: Judging, seed: int) -> None:
    rep, _ = j.cand_call(seed, op="profile", bound=j.call_bound(floor=10.0, scale=10.0))  # the profiler's own cost
    own = frozenset(rep.get("own_namespaces") or ())
    trees = rep.get("trees") or {}
    ops = {k: v for k, v in rep.get("ops", {}).items() if "::" in k}
    kernels = rep.get("kernels", {})
    cuda = j.cfg.device.startswith("cuda")
    j.v.profile = {"aten_ops": ops, "kernels": kernels, "outer_compute": rep.get("outer_compute", {}),
                   "trees": trees}
    j.check_against(seed, "profiled", len(j.v.trials))
    j.v.evidence.update(partial.custom_share(rep, cuda))
    if rep.get("counter") is not None:  # a switched-off counter names itself before the ops it hid
        _check_tripwires(j, "profiled call", rep["counter"])
    if j.cfg.allow_torch_ops:
        return
    if j.cfg.rules == rules.PARTIAL:
        partial.check(j, seed, rep)
    else:
        names = _names_in_trees(trees) | set(ops)
        _reject_torch_compute(names, own, "(only allocation/view/copy ops are allowed under --rules strict; "
                              "--rules partial lets torch run beside the candidate's kernels)", lambda bad: ops)
    if cuda:
        launches = rep.get("launches", {})
        j.v.profile["launches"] = launches
        if not launches.get("custom"):
            raise Reject(Status.REJECTED, rules.NO_CUSTOM_KERNEL,
                         "no kernel of the candidate's own ran on the GPU (every launch came from a torch op)",
                         kernels=list(kernels)[:20])
        streams = {s for d in kernels.values() for s in d.get("streams", [])}
        ts = rep.get("timing_stream")
        other = sorted(map(str, streams - {ts})) if ts is not None else []
        if other or len(streams) > 1:
            raise Reject(Status.REJECTED, rules.SIDE_STREAM,
                         f"kernels ran on stream(s) {', '.join(other) or sorted(map(str, streams))} besides "
                         f"the timing stream {ts}; the timing events cover the current stream only",
                         streams=sorted(map(str, streams)), timing_stream=str(ts))
        # whose kernels they were: the candidate's, a library's reached below the dispatcher, or code
        # a library generated (issue 25 class 3 on CUDA; sandbox/rules/kernelowners.py)
        kernelowners.check(j, kernels, strict=j.cfg.rules != rules.PARTIAL)


def check_op_counts(j: Judging, phase: str, rep: dict[str, Any]) -> None:
    """What the op counter saw inside forward on every call since the last monitor report, and
    whether it was left working; the link check of what the candidate loaded."""
    counter = rep.get("counter")
    if counter is not None:
        _check_tripwires(j, phase, counter)
    counts = rep.get("aten_ops")
    if counts is None:
        if j.opcount_path:
            j.v.evidence["opcount"] = rep.get("opcount_error") or "not loaded in the worker"
        return
    own = frozenset(rep.get("own_namespaces") or ())
    if own:
        j.v.evidence["own_op_namespaces"] = sorted(own)
    total = j.v.profile.setdefault("aten_counts", {})
    for k, n in counts.items():
        if "::" in k:
            total[k] = total.get(k, 0) + int(n)
    partial.counted_share(j, int(rep.get("own_ns") or 0), int(rep.get("fwd_ns") or 0))
    if j.cfg.allow_torch_ops:
        return
    _check_links(j, rep.get("linked") or {})
    lib = rep.get("library") or {}
    if lib.get("bridge") or lib.get("numpy"):
        tot = j.v.evidence.setdefault("library_calls", {"bridge": 0, "numpy": 0})
        tot["bridge"] += int(lib.get("bridge") or 0)
        tot["numpy"] += int(lib.get("numpy") or 0)
        raise Reject(Status.REJECTED, rules.LIBRARY_COMPUTE,
                     f"during the {phase} calls forward handed tensors to numpy or called numpy on arrays "
                     f"({tot['bridge']} tensor/numpy bridge call(s), {tot['numpy']} numpy call(s) on arrays): a "
                     "third-party library's compute is not the candidate's own code (docs/evaluator.md, "
                     "\"The candidate's own code\")", library_calls=tot)
    if j.cfg.rules == rules.PARTIAL:
        partial.check_calls(j, phase, rep)
        return
    _reject_torch_compute(counts, own, f"during the {phase} calls (counted on every call; only allocation/view/copy "
                          "ops are allowed under --rules strict)", lambda bad: {k: counts[k] for k in bad})


def _check_tripwires(j: Judging, phase: str, counter: dict[str, Any]) -> None:
    """The counting machinery was left working (custom_code.counter_disabled), and no tripwire
    fired (sandbox/rules/tripwires.py: the hooks ones are enforced even with --allow-torch-ops)."""
    if "py_hooks" in counter:
        j.v.evidence["counter"] = {k: counter.get(k) for k in ("py_hooks", "library_hooks")}
    fired = tripwires.describe(int(counter.get("flags") or 0))
    for rule, what in fired:
        if rule == rules.HOOKS:
            raise Reject(Status.REJECTED, rule, f"{phase}: the candidate {what}", tripwires=[w for _, w in fired])
    if j.cfg.allow_torch_ops:
        return
    for rule, what in fired:
        raise Reject(Status.REJECTED, rule, f"{phase}: the candidate {what} inside the judged process",
                     tripwires=[w for _, w in fired])
    if int(counter.get("probe_failed") or 0) or counter.get("rf_enabled") is False:
        n = int(counter.get("probe_failed") or 0)
        raise Reject(Status.REJECTED, rules.COUNTER_DISABLED,
                     f"{phase}: the op counter did not see its probe at the end of {n} call(s)"
                     + ("" if counter.get("rf_enabled") is not False else "; RecordFunction was off in the worker")
                     + ": RecordFunction was switched off or the counter's callback removed inside forward")


def _check_links(j: Judging, linked: dict[str, dict[str, list[str]]]) -> None:
    if not linked:
        return
    ev = j.v.evidence.setdefault("linked", {})
    ev.update(linked)
    strict = j.cfg.rules != rules.PARTIAL
    for cat, (rule, what, always) in _LINKED.items():
        for path, cats in linked.items():
            syms = cats.get(cat)
            if syms and (always or strict):
                raise Reject(Status.REJECTED, rule,
                             f"the candidate's module {path.rsplit('/', 1)[-1]} {what}: it links to "
                             f"{', '.join(syms[:4])} (the link check, docs/evaluator.md)", linked={path: cats})


def _reject_torch_compute(ops: Any, own: frozenset[str], detail: str, evidence: Any) -> None:
    """Rule custom_code.torch_compute: ``ops`` holds ops outside the allocation/view/copy allowlist."""
    bad = disallowed(ops, own)
    if bad:
        raise Reject(Status.REJECTED, rules.TORCH_FALLBACK,
                     f"torch computed part of the result: ops {', '.join(bad[:8])} ran inside forward {detail}",
                     aten_ops=evidence(bad))
