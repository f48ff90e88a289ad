"""What one profiled call ran, from ``torch.profiler`` events (the ``profile`` request of either
worker; the judge's custom-code rules read it, sandbox/rules/customcode.py and sandbox/rules/partial.py).

``is_candidates_launch`` is the one place that decides whether a kernel launch is the
candidate's own; ``own`` is the set of op namespaces the candidate registered
(sandbox/rules/ownhooks.py). Today: a launch with no torch or library op above it. (A later change can
attribute each launch to the module that holds the kernel instead; keep the decision here.)"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sandbox.rules.atenops import is_compute, is_op

FUNCTION_SCOPE = 0  # at::RecordScope::FUNCTION: the dispatcher's op events


def _device(ev: Any) -> str:
    return str(getattr(ev, "device_type", "")).rsplit(".", 1)[-1]


def _ancestors(ev: Any) -> Any:
    p = getattr(ev, "cpu_parent", None)
    while p is not None:
        yield p
        p = getattr(p, "cpu_parent", None)


def _is_op_event(ev: Any, own: Iterable[str] = ()) -> bool:
    """A torch or library op (an event of the dispatcher's FUNCTION scope, not the candidate's own)."""
    return getattr(ev, "scope", FUNCTION_SCOPE) == FUNCTION_SCOPE and is_op(ev.name, own)


def is_candidates_launch(ev: Any, own: Iterable[str] = ()) -> bool:
    """Whether a CPU-side kernel launch event is the candidate's own: no torch or library op above
    it (an op of the candidate's own namespaces may be)."""
    return not any(_is_op_event(p, own) for p in _ancestors(ev))


def _us(ev: Any) -> float:
    tr = getattr(ev, "time_range", None)
    return float(tr.elapsed_us()) if tr is not None else 0.0


def tree_key(outer: str, nested: Iterable[str]) -> str:
    """The op counter's tree format (sandbox/rules/opcount.cpp): ``outer>nested,nested`` (sorted, unique)."""
    return outer + ">" + ",".join(sorted(set(nested)))


def summarize(events: Any, own: Iterable[str] = ()) -> dict[str, Any]:
    """CPU ops by name, device kernels with their streams, kernel launches split into the
    candidate's own and torch's, and the timing stream: the stream of the earliest device event
    (the worker's marker kernel starts the window). For the rule sets (sandbox/rules/partial.py):
    ``trees``, each outermost op with the ops nested under it (the op counter's format);
    ``outer_compute``, the compute ops with no compute op above them; ``aten_us``, host time inside
    outermost torch ops; ``kernel_us``, device time of the candidate's own kernels, of kernels
    launched under a torch op, and of kernels whose launch was not seen (the marker excluded)."""
    own = frozenset(own)
    ops: dict[str, int] = {}
    outer: dict[str, int] = {}
    trees: dict[str, int] = {}
    nested: dict[int, list[str]] = {}  # id of an outermost op event -> names under it
    roots: list[Any] = []
    kernels: dict[str, dict[str, Any]] = {}
    launches = {"custom": 0, "aten": 0}
    launch_own: dict[int, bool] = {}  # correlation id of a launch -> launched by custom code
    timing_stream, first_start, first_dev = None, None, None
    aten_us = 0.0
    dev = []
    for ev in events:
        if _device(ev) != "CPU":
            dev.append(ev)
            st = getattr(getattr(ev, "time_range", None), "start", None)
            if st is not None and (first_start is None or st < first_start):
                first_start, timing_stream, first_dev = st, getattr(ev, "device_resource_id", None), ev
    for ev in events:
        if _device(ev) != "CPU":
            k = kernels.setdefault(ev.name[:200], {"count": 0, "streams": []})
            k["count"] += 1
            sid = getattr(ev, "device_resource_id", None)
            if sid is not None and sid not in k["streams"]:
                k["streams"].append(sid)
            continue
        if ev.name == "kh::probe":  # the judge's own (sandbox/rules/opcount.cpp), not the forward's
            continue
        ops[ev.name] = ops.get(ev.name, 0) + 1
        if "LaunchKernel" in ev.name or "LaunchCooperativeKernel" in ev.name:
            mine = is_candidates_launch(ev, own)
            launches["custom" if mine else "aten"] += 1
            launch_own[getattr(ev, "id", -1)] = mine
            continue
        if getattr(ev, "scope", FUNCTION_SCOPE) != FUNCTION_SCOPE or "::" not in ev.name:
            continue
        anc = [p for p in _ancestors(ev) if getattr(p, "scope", FUNCTION_SCOPE) == FUNCTION_SCOPE
               and "::" in p.name and p.name != "kh::probe"]
        if not anc:
            roots.append(ev)
            nested.setdefault(id(ev), [])
            if is_op(ev.name, own):
                aten_us += _us(ev)
        else:
            nested.setdefault(id(anc[-1]), []).append(ev.name)
        if is_compute(ev.name, own) and not any(is_compute(p.name, own) for p in anc):
            outer[ev.name] = outer.get(ev.name, 0) + 1
    for ev in roots:
        key = tree_key(ev.name, nested.get(id(ev), []))
        trees[key] = trees.get(key, 0) + 1
    kernel_us = {"custom": 0.0, "aten": 0.0, "unknown": 0.0}
    for ev in dev:
        if ev is first_dev:  # the worker's marker kernel, not the forward's
            continue
        mine = launch_own.get(getattr(ev, "id", -1))
        by = "unknown" if mine is None else "custom" if mine else "aten"
        kernel_us[by] += _us(ev)
        k = kernels[ev.name[:200]].setdefault("by", {})  # who launched it (sandbox/rules/kernelowners.py)
        k[by] = k.get(by, 0) + 1
    return {"ops": ops, "kernels": kernels, "launches": launches, "timing_stream": timing_stream,
            "outer_compute": outer, "trees": trees, "aten_us": round(aten_us, 3),
            "kernel_us": {k: round(v, 3) for k, v in kernel_us.items()}}
