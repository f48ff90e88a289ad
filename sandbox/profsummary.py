"""What one profiled call ran, from ``torch.profiler`` events (the ``profile`` request of either
worker; the judge's custom-code rules read it, sandbox/customcode.py and sandbox/partial.py)."""

from __future__ import annotations

from typing import Any

from sandbox.atenops import is_compute


def _device(ev: Any) -> str:
    return str(getattr(ev, "device_type", "")).rsplit(".", 1)[-1]


def _ancestors(ev: Any) -> Any:
    p = getattr(ev, "cpu_parent", None)
    while p is not None:
        yield p
        p = getattr(p, "cpu_parent", None)


def _aten_ancestor(ev: Any) -> str | None:
    """The aten op under which a CPU-side launch event ran (None: launched by custom code)."""
    return next((p.name for p in _ancestors(ev) if p.name.startswith("aten::")), None)


def _us(ev: Any) -> float:
    tr = getattr(ev, "time_range", None)
    return float(tr.elapsed_us()) if tr is not None else 0.0


def summarize(events: Any) -> dict[str, Any]:
    """CPU ops by name, device kernels with their streams, kernel launches split into the
    candidate's own and those under an aten op, and the timing stream: the stream of the
    earliest device event (the worker's marker kernel starts the window). For the rule sets
    (sandbox/partial.py): ``outer_compute``, the compute ops with no compute op above them (the
    ops the forward itself asked torch for, whatever they decompose into); ``aten_us``, host
    time inside outermost aten ops; ``kernel_us``, device time of the candidate's own kernels,
    of kernels launched under an aten op, and of kernels whose launch was not seen (the
    marker excluded)."""
    ops: dict[str, int] = {}
    outer: dict[str, int] = {}
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
        if _device(ev) == "CPU":
            ops[ev.name] = ops.get(ev.name, 0) + 1
            if "LaunchKernel" in ev.name or "LaunchCooperativeKernel" in ev.name:
                own = _aten_ancestor(ev) is None
                launches["custom" if own else "aten"] += 1
                launch_own[getattr(ev, "id", -1)] = own
            elif ev.name.startswith("aten::"):
                anc = list(_ancestors(ev))
                if not any(p.name.startswith("aten::") for p in anc):
                    aten_us += _us(ev)
                if is_compute(ev.name) and not any(is_compute(p.name) for p in anc):
                    outer[ev.name] = outer.get(ev.name, 0) + 1
        else:
            k = kernels.setdefault(ev.name[:200], {"count": 0, "streams": []})
            k["count"] += 1
            sid = getattr(ev, "device_resource_id", None)
            if sid is not None and sid not in k["streams"]:
                k["streams"].append(sid)
    kernel_us = {"custom": 0.0, "aten": 0.0, "unknown": 0.0}
    for ev in dev:
        if ev is first_dev:  # the worker's marker kernel, not the forward's
            continue
        own = launch_own.get(getattr(ev, "id", -1))
        kernel_us["unknown" if own is None else "custom" if own else "aten"] += _us(ev)
    return {"ops": ops, "kernels": kernels, "launches": launches, "timing_stream": timing_stream,
            "outer_compute": outer, "aten_us": round(aten_us, 3),
            "kernel_us": {k: round(v, 3) for k, v in kernel_us.items()}}
