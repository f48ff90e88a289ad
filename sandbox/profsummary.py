"""What one profiled call ran, from ``torch.profiler`` events (the candidate worker's
``profile`` request; the judge's custom-code rule reads it, sandbox/customcode.py)."""

from __future__ import annotations

from typing import Any


def _device(ev: Any) -> str:
    return str(getattr(ev, "device_type", "")).rsplit(".", 1)[-1]


def _aten_ancestor(ev: Any) -> str | None:
    """The aten op under which a CPU-side launch event ran (None: launched by custom code)."""
    p = getattr(ev, "cpu_parent", None)
    while p is not None:
        if p.name.startswith("aten::"):
            return p.name
        p = getattr(p, "cpu_parent", None)
    return None


def summarize(events: Any) -> dict[str, Any]:
    """CPU ops by name, device kernels with their streams, kernel launches split into the
    candidate's own and those under an aten op, and the timing stream: the stream of the
    earliest device event (the worker's marker kernel starts the window)."""
    ops: dict[str, int] = {}
    kernels: dict[str, dict[str, Any]] = {}
    launches = {"custom": 0, "aten": 0}
    timing_stream, first_start = None, None
    for ev in events:
        if _device(ev) != "CPU":
            st = getattr(getattr(ev, "time_range", None), "start", None)
            if st is not None and (first_start is None or st < first_start):
                first_start, timing_stream = st, getattr(ev, "device_resource_id", None)
    for ev in events:
        if _device(ev) == "CPU":
            ops[ev.name] = ops.get(ev.name, 0) + 1
            if "LaunchKernel" in ev.name or "LaunchCooperativeKernel" in ev.name:
                launches["aten" if _aten_ancestor(ev) else "custom"] += 1
        else:
            k = kernels.setdefault(ev.name[:200], {"count": 0, "streams": []})
            k["count"] += 1
            sid = getattr(ev, "device_resource_id", None)
            if sid is not None and sid not in k["streams"]:
                k["streams"].append(sid)
    return {"ops": ops, "kernels": kernels, "launches": launches, "timing_stream": timing_stream}
