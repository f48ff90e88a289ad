"""The custom-code rule (#2, #3): the candidate computes with code it brings; torch may only
allocate, view and copy (``--rules strict``; ``--rules partial`` is sandbox/partial.py). Two
sources of evidence, both read by the judge:

* the profiled call (``custom_code``): the aten ops, kernel launches and streams of one call
  under ``torch.profiler``; on CUDA at least one launch must be the candidate's own and every
  kernel must run on the timing stream;
* the aten-op counter (sandbox/opcount.py), armed inside ``forward`` on every call and read
  with each monitor report, so a candidate that behaves only while profiled is still caught.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sandbox import partial, rules
from sandbox.atenops import ALLOWED_ATEN, disallowed  # noqa: F401 (re-exported)
from sandbox.errors import Reject
from sandbox.verdict import Status

if TYPE_CHECKING:
    from sandbox.judge import Judge


def check_profiled_call(j: Judge, seed: int) -> None:
    rep, _ = j.cand_call(seed, op="profile", bound=j.call_bound(floor=10.0, scale=10.0))  # the profiler's own cost
    ops = {k: v for k, v in rep.get("ops", {}).items() if k.startswith("aten::")}
    kernels = rep.get("kernels", {})
    cuda = j.cfg.device.startswith("cuda")
    j.v.profile = {"aten_ops": ops, "kernels": kernels, "outer_compute": rep.get("outer_compute", {})}
    j.check_against(seed, "profiled", len(j.v.trials))
    j.v.evidence.update(partial.custom_share(rep, cuda))
    if j.cfg.allow_torch_ops:
        return
    if j.cfg.rules == rules.PARTIAL:
        partial.check(j, seed, rep)
    else:
        _reject_torch_compute(ops, "(only allocation/view/copy ops are allowed under --rules strict; "
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


def check_op_counts(j: Judge, phase: str, rep: dict[str, Any]) -> None:
    """The aten ops counted inside forward on every call since the last monitor report."""
    counts = rep.get("aten_ops")
    if counts is None:
        if j.opcount_path:
            j.v.evidence["opcount"] = rep.get("opcount_error") or "not loaded in the worker"
        return
    total = j.v.profile.setdefault("aten_counts", {})
    for k, n in counts.items():
        if k.startswith("aten::"):
            total[k] = total.get(k, 0) + int(n)
    if j.cfg.allow_torch_ops:
        return
    if j.cfg.rules == rules.PARTIAL:
        partial.check_counts(j, phase, total)
        return
    _reject_torch_compute(counts, f"during the {phase} calls (counted on every call; only allocation/view/copy ops "
                          "are allowed under --rules strict)",
                          lambda bad: {k: counts[k] for k in bad})


def _reject_torch_compute(ops: Any, detail: str, evidence: Any) -> None:
    """Rule custom_code.torch_fallback: ``ops`` holds aten ops outside the allowlist."""
    bad = disallowed(ops)
    if bad:
        raise Reject(Status.REJECTED, rules.TORCH_FALLBACK,
                     f"torch computed part of the result: aten ops {', '.join(bad[:8])} ran inside forward {detail}",
                     aten_ops=evidence(bad))
