"""The parent's checks of one judgement (sandbox/judge.py): calls into both workers, the
candidate's inputs staged by the reference worker, its output handed to the reference worker
through the arena for comparison (sandbox/worker/arena.py, sandbox/check/refcheck.py), and the monitors'
report. Each failure raises ``Reject``, which stops the cascade with a verdict."""

from __future__ import annotations

import math
import time
from typing import Any

from sandbox import rules
from sandbox.errors import ReferenceFailed, Reject  # noqa: F401 - ReferenceFailed re-exported
from sandbox.verdict import Status, Trial


def _is_oom(text: str) -> bool:
    return any(s in text for s in ("MemoryError", "can't allocate memory", "not enough memory",
                                   "CUDA out of memory", "OutOfMemoryError", "Cannot allocate memory"))


def failure_status(rep: dict[str, Any], oom_message: str) -> Status:
    """The status of a failed candidate reply: compile_error or runtime_error. A runtime error
    that ran out of memory is ``rejected sandbox.resources`` instead (raised here)."""
    if rep.get("kind") == "hooks":
        raise Reject(Status.REJECTED, rules.HOOKS, f"the candidate's hooks were around a trusted step: {rep.get('error')}")
    if rep.get("kind") == "output_type":  # not a plain tensor or a plain tuple/list of them (callpath._unpack)
        raise Reject(Status.REJECTED, rules.OUTPUT_TYPE, str(rep.get("error", ""))[:500])
    status = Status.COMPILE_ERROR if rep.get("kind") == "compile_error" else Status.RUNTIME_ERROR
    if status is Status.RUNTIME_ERROR and _is_oom(rep.get("error", "")):
        raise Reject(Status.REJECTED, rules.RESOURCES, oom_message, log=rep.get("error", ""))
    return status


CALL_FLOOR_S = 2.0  # every candidate request has a deadline: max(floor, CALL_MULT x the reference's call)
CALL_MULT = 50.0
# other threads' CPU around one checked output (check_window): the floor, and the share of the
# window's wall time (from the call's prepare to after the check) allowed beyond it
CHECK_BG_FLOOR_US = 50.0
CHECK_BG_FRACTION = 0.05
# ... and how many windows must be over, in number and in share of those checked
CHECK_BG_MIN_OVER = 3
CHECK_BG_OVER_SHARE = 0.25
# the worker's own threads (alive before any candidate code: kineto's config loader wakes every
# 5 s and burnt 40-150 us a wake on a loaded 2-core box) may burn up to this much in one window,
# at most once per CHECK_BG_OWN_EVERY_S of the judge's clock; the rest of their CPU counts
CHECK_BG_OWN_US = 1500.0
CHECK_BG_OWN_EVERY_S = 3.0


def own_excused(us: float, own_us: float, allowed: float, since_last_s: float) -> float:
    """The part of a window's other-thread CPU ``us`` excused as the worker's own threads'
    (``own_us`` of it): all of it, up to CHECK_BG_OWN_US, where it alone puts the window over
    ``allowed`` and the last excuse was at least CHECK_BG_OWN_EVERY_S ago; else none."""
    own = min(own_us, CHECK_BG_OWN_US, us)
    if us > allowed and own > 0 and us - own <= allowed and since_last_s >= CHECK_BG_OWN_EVERY_S:
        return own
    return 0.0


class Checks:
    """Mixed into Judge, which sets the attributes used here (workers, task, tolerances,
    verdict, reference output sizes, the reference's call time, the GPU-held
    deadline)."""

    def call_bound(self, floor: float = CALL_FLOOR_S, scale: float = 1.0) -> tuple[float, str]:
        """The deadline of one candidate request, enforced by the parent (sandbox/worker/session.py):
        max(floor, CALL_MULT x the reference's time for one call) x scale, and never past the
        judgement's bound on holding the GPU."""
        b = max(floor, CALL_MULT * self.ref_call_s) * scale
        deadline = time.monotonic() + b
        why = (f"{b:.1f} s = max({floor:g} s, {CALL_MULT:g} x the reference's {self.ref_call_s * 1e3:.2f} ms per call)"
               + (f" x {scale:g}" if scale != 1 else ""))
        if self.hold_until is not None and self.hold_until < deadline:
            deadline = self.hold_until
            why = (f"the judgement's {self.cfg.gpu_hold_s:g} s bound on holding the GPU after warm-up "
                   "(compile and first calls excluded)")
        return deadline, why

    def ref_call(self, seed: int, stage: bool = False) -> None:
        """The reference's output for ``seed``, left in the reference worker for ``check``.
        ``stage``: the same inputs also go into the candidate's input region (its next call)."""
        rep, rtt = self.ref.request("call", seed=seed, target="eager", stage=stage)
        if not rep.get("ok"):
            raise ReferenceFailed(f"{self.task.path}: the reference failed on seed {seed}: {rep.get('error')}")
        self.ref_bytes = [int(b) for b in rep.get("out_bytes", [])]
        self.ref_call_s = max(self.ref_call_s, rtt / 1e9)
        if stage:
            self.staged = (seed, rep["inputs"])
        # the output region bounds the candidate's output: 2x the reference's, plus slack
        self.arena.ensure("out", 2 * sum(self.ref_bytes) + 2**20)

    def stage(self, seed: int) -> dict[str, Any]:
        """The inputs of the candidate's next call (``seed``), made by the reference worker and
        written into the candidate's input region; returns the request fields that name them
        (their header, relayed by the parent: the candidate never reads a header from shared
        memory, and never gets the seed)."""
        if self.staged is None or self.staged[0] != seed:
            rep, _ = self.ref.request("stage", seed=seed)
            if not rep.get("ok"):
                raise ReferenceFailed(f"{self.task.path}: making inputs for seed {seed} failed: "
                                      f"{str(rep.get('error', ''))[:2000]}")
            self.staged = (seed, rep["inputs"])
        return {"inputs": self.staged[1]}

    def cand_call(self, seed: int, op: str = "call", bound: tuple[float, str] | None = None,
                  target: str = "candidate", **extra: Any) -> tuple[dict[str, Any], int]:
        if op != "go":
            extra.update(self.stage(seed))
        rep, rtt = self.cand.request(op, target=target, bound=bound or self.call_bound(), **extra)
        if not rep.get("ok"):
            status = failure_status(rep, "the candidate ran out of its memory limit")
            raise Reject(status, None, f"the candidate raised on a call (seed {seed})",
                         log=rep.get("error", ""))
        return rep, rtt

    def check_output(self, what: str, against: str = "last", keep: str | None = None) -> dict[str, Any]:
        """Fetch the candidate's last output and have the reference worker compare it
        (sandbox/check/refcheck.py). Returns the check's reply; raises Reject for an output that is
        not plain tensors of the reference's types, or inputs the candidate modified."""
        f, _ = self.cand.request("fetch", bound=self.call_bound(floor=max(10.0, 4 * sum(self.ref_bytes) / 1e8)))
        if f.get("kind") == "hooks":
            failure_status(f, "")
        if not f.get("ok"):
            raise Reject(Status.REJECTED, rules.OUTPUT_TYPE, f.get("error", "output cannot be fetched"))
        limit = 2 * sum(self.ref_bytes) + 2**20  # plain tensors of the reference's sizes, plus slack
        size = f.get("too_big", f.get("nbytes"))
        if not isinstance(size, int) or size > limit or f.get("too_big") is not None:
            raise Reject(Status.REJECTED, rules.OUTPUT_TYPE,
                         f"{what}: the output is {size} bytes; the reference's outputs are "
                         f"{sum(self.ref_bytes)} bytes in all")
        # the candidate's whole tree is stopped while the reference reads the output and its
        # inputs: no thread of it can rewrite the arena under the check
        t_freeze = time.monotonic()
        frozen = self.cand.freeze()
        self.v.evidence["freeze_s"] = round(self.v.evidence.get("freeze_s", 0.0) + time.monotonic() - t_freeze, 4)
        try:
            fused = getattr(self, "fused_cmp", None)  # (path, sha256) of sandbox/check/fusedcompare.py's library
            rep, _ = self.ref.request("check", entries=f.get("entries"), devices=f.get("devices", []),
                                      atol=self.atol, rtol=self.rtol, against=against, keep=keep,
                                      trivial=against == "last", limit=limit,
                                      **({"fused": fused[0], "fused_sha256": fused[1]} if fused else {}))
        finally:
            self.cand.thaw(frozen)
        self.v.evidence["frozen_checks"] = self.v.evidence.get("frozen_checks", 0) + bool(frozen)
        if fused and rep.get("ok"):
            ev = self.v.evidence.setdefault("compare_fused", {"outputs": 0})
            ev["outputs"] += int(rep.get("fused") or 0)
            if rep.get("fused_error"):
                ev["error"] = rep["fused_error"]
        self.check_window(what)
        if not rep.get("ok"):
            raise Reject(Status.REJECTED, rules.OUTPUT_TYPE, f"{what}: the output could not be checked: "
                         f"{str(rep.get('error', ''))[:500]}")
        if rep.get("load_error"):
            raise Reject(Status.REJECTED, rules.OUTPUT_TYPE, rep["load_error"])
        if not rep.get("types_ok"):
            raise Reject(Status.INCORRECT if rep.get("plain") else Status.REJECTED, rules.OUTPUT_TYPE,
                         f"{what}: {rep.get('message')}")
        if not f.get("inputs_unchanged"):
            raise Reject(Status.INCORRECT, rules.INPUTS_MODIFIED, f"{what}: the candidate modified its inputs")
        if rep.get("inputs_intact") is False:
            raise Reject(Status.INCORRECT, rules.INPUTS_MODIFIED,
                         f"{what}: the candidate's input region no longer holds the inputs the reference staged")
        return rep

    def check_window(self, what: str) -> None:
        """Work the candidate's other threads did for a checked output: their CPU from the end of
        the call's timed window to after the check. A window is over when that CPU is above
        max(CHECK_BG_FLOOR_US, CHECK_BG_FRACTION of the window); the verdict is timing.threads once
        CHECK_BG_MIN_OVER windows are over and they are more than CHECK_BG_OVER_SHARE of the windows
        checked. One window over is not enough: an honest CPU worker has one other thread, kineto's
        config loader (started by the worker's profiler), which wakes every 5 s and burnt up to 1.1
        ms when a wake fell inside a window on a loaded 2-core box. So the CPU of the threads that
        were alive before any candidate code (the worker reports it apart, with the busiest threads
        by name) is excused in one window per CHECK_BG_OWN_EVERY_S, up to CHECK_BG_OWN_US, where it
        alone puts the window over; a candidate that makes such a thread work for it (a signal to
        it) gains one window in several, which the share rule does not let through. A rewrite
        of the output outside the timed window has to happen for every checked output (each is
        compared), so it shows in nearly all windows; the timing median makes a shortcut taken in a
        minority of calls worthless. Enforced on CPU. On a GPU it is recorded only: honest CUDA
        kernels showed 2.2-8.3 ms of other threads' CPU around every check on the H100 (most likely
        the driver's own threads; docs/evaluator.md), so there the freeze and the per-call median of
        sandbox/timing/measure.py stand alone."""
        rep, _ = self.cand.request("bg", bound=self.call_bound(floor=10.0))
        if not rep.get("ok"):
            return
        gpu = self.cfg.device.startswith("cuda")
        us = int(rep.get("since_call_ns", 0)) / 1e3
        allowed = max(CHECK_BG_FLOOR_US, CHECK_BG_FRACTION * int(rep.get("window_ns", 0)) / 1e3)
        ev = self.v.evidence.setdefault("check_bg_us", {"us": -1.0, "windows": 0, "over": 0,
                                                        "enforced": not gpu})
        ev["windows"] += 1
        now = time.monotonic()
        excused = own_excused(us, int(rep.get("own_ns", 0)) / 1e3, allowed,
                              now - getattr(self, "_bg_own_at", -math.inf))
        if excused:
            self._bg_own_at = now  # one wake of the worker's own threads, not the candidate's work
            ev["own_excused"] = ev.get("own_excused", 0) + 1
            ev["own_excused_us"] = max(ev.get("own_excused_us", 0.0), round(excused, 1))
            us -= excused
        if us > allowed:
            ev["over"] += 1
            if len(ev.setdefault("over_at", [])) < 5:  # which windows, and whose CPU it was
                ev["over_at"].append([what, round(us, 1), round(allowed, 1), rep.get("busiest", [])])
        if us > ev["us"]:
            ev.update({"us": round(us, 1), "since_prepare_us": round(int(rep.get("since_prepare_ns", 0)) / 1e3, 1),
                       "allowed": round(allowed, 1), "at": what, "busiest": rep.get("busiest", [])})
        if not gpu and ev["over"] >= CHECK_BG_MIN_OVER and ev["over"] > CHECK_BG_OVER_SHARE * ev["windows"]:
            raise Reject(Status.REJECTED, rules.THREADS,
                         f"{what}: other threads of the candidate's process burnt CPU between the end of "
                         f"the call and its check in {ev['over']} of {ev['windows']} checked outputs "
                         f"(now {us:.0f} us, allowed {allowed:.0f} us; busiest threads {rep.get('busiest', [])}): "
                         "the output was worked on outside the timed window")

    def check_against(self, seed: int, label: str, index: int, rule_fail: str | None = None,
                      ref_ready: bool = False, keep: str | None = None) -> Trial:
        """Compare the candidate's last output with the reference's for ``seed`` (computed now
        unless ``ref_ready``: the reference's last call used that seed)."""
        if not ref_ready:
            self.ref_call(seed)
        rep = self.check_output(f"trial {index} ({label})", keep=keep)
        trial = Trial(index, label, bool(rep["passed"]), rep.get("max_abs_err"), rep.get("max_rel_err"),
                      rep.get("mismatch_fraction"), rep.get("message", ""),
                      [None if t is None or not math.isfinite(t) else float(t) for t in rep.get("tightest_tol") or []])
        self.v.trials.append(trial)
        if not trial.passed:
            raise Reject(Status.INCORRECT, rule_fail or rep.get("rule"),
                         f"trial {index} ({label}, seed {seed}): {rep.get('message')}")
        if rep.get("trivial"):
            raise Reject(Status.INCORRECT, rules.TRIVIAL_OUTPUT, f"trial {index} ({label}): {rep['trivial']}")
        return trial

    def check_monitor(self, phase: str) -> dict[str, Any]:
        rep, _ = self.cand.request("monitor", bound=self.call_bound(floor=10.0))
        from sandbox.rules.customcode import check_op_counts

        check_op_counts(self, phase, rep)
        if rep.get("hooks"):
            raise Reject(Status.REJECTED, rules.HOOKS, f"{phase}: {'; '.join(rep['hooks'][:3])}")
        for ev in rep.get("events", []):
            raise Reject(Status.REJECTED, ev["rule"], f"{phase}: blocked {ev['what']} (during {ev['phase']})",
                         events=rep["events"])
        if rep.get("changed"):
            raise Reject(Status.REJECTED, rules.TIMER_PATCHED,
                         f"{phase}: timing functions were replaced: {', '.join(rep['changed'][:5])}")
        if rep.get("c_entries"):
            raise Reject(Status.REJECTED, rules.TIMER_PATCHED,
                         f"{phase}: the C entry points of {', '.join(rep['c_entries'][:5])} were swapped")
        if rep.get("py_threads"):
            raise Reject(Status.REJECTED, rules.THREADS,
                         f"{phase}: the candidate started Python threads: {rep['py_threads'][:5]}")
        return rep
