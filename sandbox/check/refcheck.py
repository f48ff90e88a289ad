"""The reference worker's ``check`` request: compare a candidate output with its own.

The candidate worker copies its last output into the arena's output region (``fetch``,
sandbox/worker/arena.py) and replies with its header; the parent relays the header and asks for a
check. The reference worker validates the header against the region, copies the output out of
shared memory onto its device and runs sandbox/check/compare.py against
the output it still holds (``against="last"``: its last call, made with the same seed) or
against a candidate output it kept earlier (``against="first"``: the determinism check).

So a check moves one output instead of two, and on a GPU the float64 comparison runs on the
GPU rather than on the parent's CPU (the parent's comparison of a 128 MB output was the
largest part of a feedback judgement, docs/performance.md). The reply carries numbers and
messages only; the parent still decides the verdict. Nothing of the candidate runs here:
the region holds raw tensor bytes, the header is JSON (no pickle); a malformed header is itself
the answer (rule output_type). The check also says whether the candidate's input region still
holds, byte for byte, the inputs this worker staged there (``inputs_intact``).
"""

from __future__ import annotations

from typing import Any

from sandbox.worker import arena
from sandbox.worker.tensorfmt import Malformed

MAX_KEPT = 2  # candidate outputs kept for later checks ("first")


def check(w: Any, req: dict[str, Any]) -> dict[str, Any]:
    """``req``: entries (the output header the candidate's worker reported), devices (the
    candidate's output devices), atol, rtol, against ("last" or a kept name), keep (a name or
    None), trivial (bool), limit (the output bound in bytes, from the parent)."""
    from sandbox.check import compare

    t = w.torch
    try:
        limit = req.get("limit")  # the parent's output bound for this call (the region may be bigger)
        outs = arena.read_outputs(t, req.get("entries"), w.arena.u8.get("out"), w.device,
                                  limit if type(limit) is int else None)
    except Malformed as e:
        return {"ok": True, "load_error": f"the output header is malformed: {e}"}
    intact = None
    if w.staged is not None and w.arena.u8.get("cand_in") is not None:
        intact = arena.inputs_intact(t, w.staged[0], w.staged[1], w.arena.u8["cand_in"])
    against = req.get("against", "last")
    ref = w.last_out if against == "last" else w.kept.get(against)
    if ref is None:
        return {"ok": False, "kind": "protocol", "error": f"nothing to check against ({against!r})"}
    ref_devices = [str(r.device) if isinstance(r, t.Tensor) else type(r).__name__ for r in ref]
    named = next((i for i, o in enumerate(outs) if isinstance(o, str)), None)
    if named is not None and len(outs) == len(ref):  # not a plain tensor: the reader gave its type's name
        return {"ok": True, "types_ok": False, "plain": False, "inputs_intact": intact,
                "message": f"output {named} is a {outs[named]}, not a plain torch.Tensor"}
    ct = compare.check_types(outs, ref, list(req.get("devices", [])), ref_devices)
    if not ct.passed:
        return {"ok": True, "types_ok": False, "message": ct.message, "plain": named is None, "inputs_intact": intact}
    atol, rtol = float(req["atol"]), float(req["rtol"])
    c = compare.compare(outs, ref, atol, rtol, fused=_fused(w, req))
    rep = {"ok": True, "types_ok": True, "passed": c.passed, "rule": c.rule, "message": c.message,
           "max_abs_err": c.max_abs_err, "max_rel_err": c.max_rel_err, "mismatch_fraction": c.mismatch_fraction,
           "tightest_tol": c.tightest_tol, "inputs_intact": intact, "fused": c.fused,
           **({"fused_error": err} if (err := _fused_error(w)) else {})}
    if c.passed and req.get("trivial", True):
        rep["trivial"] = compare.trivial(outs, ref)
    keep = req.get("keep")
    if keep:
        if keep not in w.kept and len(w.kept) >= MAX_KEPT:
            return {"ok": False, "kind": "protocol", "error": f"at most {MAX_KEPT} kept outputs"}
        w.kept[keep] = outs
    return rep


def keep_own(w: Any, req: dict[str, Any]) -> dict[str, Any]:
    """The task check's first draw (sandbox/intake/taskcheck.py): keep this worker's last output on
    its device for the redraws (``check_own``). It never goes through the arena: an 8 GiB output
    took an 8 GiB host region, a copy to the host and one back per redraw."""
    if w.last_out is None:
        return {"ok": False, "kind": "protocol", "error": "no output to keep"}
    w.own_first = w.last_out
    return {"ok": True}


def check_own(w: Any, req: dict[str, Any]) -> dict[str, Any]:
    """The task check's redraw: the kept first draw's output against the last call's, on this
    worker's device, with the op's ``atol``/``rtol`` (the fields of ``check``'s reply it uses)."""
    from sandbox.check import compare

    t = w.torch
    first, last = getattr(w, "own_first", None), w.last_out
    if first is None or last is None:
        return {"ok": False, "kind": "protocol", "error": "no kept first draw, or no call since"}

    def devices(xs: list[Any]) -> list[str]:
        return [str(x.device) if isinstance(x, t.Tensor) else type(x).__name__ for x in xs]

    ct = compare.check_types(first, last, devices(first), devices(last))
    if not ct.passed:
        return {"ok": True, "types_ok": False, "message": ct.message}
    c = compare.compare(first, last, float(req["atol"]), float(req["rtol"]), fused=_fused(w, req))
    return {"ok": True, "types_ok": True, "passed": c.passed, "message": c.message, "max_abs_err": c.max_abs_err,
            "mismatch_fraction": c.mismatch_fraction}


def _fused(w: Any, req: dict[str, Any]) -> Any:
    """The one-kernel float pass (sandbox/check/fusedcompare.py) the parent built and named in the
    request, loaded once per worker; None where there is none or it did not load (the torch pass
    runs; the reply says why). It compares only tensors on a GPU."""
    path = req.get("fused")
    if not path:
        return None
    lib = getattr(w, "fused_lib", None)
    if lib is None and not getattr(w, "fused_error", None):
        from sandbox.check import fusedcompare

        try:
            lib = w.fused_lib = fusedcompare.Lib(str(path), req.get("fused_sha256"))
        except (OSError, RuntimeError, AttributeError) as e:
            w.fused_error = f"{type(e).__name__}: {e}"[:300]
    return lib


def _fused_error(w: Any) -> str | None:
    lib = getattr(w, "fused_lib", None)
    return getattr(w, "fused_error", None) or (lib.error if lib is not None else None)
