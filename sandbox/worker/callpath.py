"""One call's path in the judging worker (sandbox/worker/main.py): the call's inputs in the arena
(made from a seed by the reference worker only, sandbox/worker/arena.py), blank tensors for the call,
poison (``prepare``); the timing lead, the inputs copied in from the arena, the L2 flush, the
clock, forward, the device sync and the output copy (``go``); the inputs-unchanged check
(``finish``). Both roles run it, so their per-call overheads compare.

The aliases below are captured when the worker starts, before any candidate code is imported;
this module's functions and CallPath's methods are in the monitors' identity snapshot
(sandbox/rules/monitors.py), so replacing them is ``timing.timer_patched``.

The candidate's code runs inside the window only (issue 25, class 1): what ``forward`` returns is
unpacked while the counter is still armed, by exact type (a ``torch.Tensor``, or a plain
``tuple``/``list`` of them: nothing of the candidate's is iterated, measured or converted after
the clock stops; anything else is ``rejected correctness.output_type``); every object the candidate got or gave
(the call's inputs, its return value) is kept until the next call's window and released there,
so a finalizer, ``__del__`` or weakref callback of theirs runs timed and counted; the candidate's
worker runs with the garbage collector off (collected inside windows), so a cycle's finalizer
cannot run in the worker's own steps; the worker's steps use torch and tensor functions captured
before the import (``FrozenModule``, the ``TensorBase`` methods) and ask sandbox/rules/hooks.py right
after the window whether anything was left to call back into the candidate.
"""

from __future__ import annotations

import gc
import os
import time
import traceback
from typing import Any

from sandbox.worker.arena import ArenaTooSmall
from sandbox.worker.threadcpu import others_by_thread as _others_by_thread
from sandbox.worker.threadcpu import threads_ns as _threads_ns

_perf_ns = time.perf_counter_ns  # aliases captured before any candidate code is imported
_ptime_ns, _ttime_ns = time.process_time_ns, time.thread_time_ns


def _others_ns(mark: tuple[int, ...] | None, p_now: int, t_now: int) -> int:
    """CPU ns of this process's other threads since ``mark`` (process, this thread, ...)."""
    return (p_now - mark[0]) - (t_now - mark[1]) if mark else 0


_listdir = os.listdir
_gc_count, _gc_collect = gc.get_count, gc.collect
MAX_TEXT = 20000
GC_BATCH = 5000  # the candidate's worker collects young garbage inside a window once this much is pending


class FrozenModule:
    """A module's attributes as they were when the worker started (before any candidate code):
    the worker's steps look torch's functions up here, so replacing ``torch.empty`` or
    ``torch.cuda.synchronize`` later changes nothing for them. Names the module gains later
    (lazy submodules) are looked up on the module itself."""

    def __init__(self, mod: Any, nested: tuple[str, ...] = ()) -> None:
        self.__dict__.update(vars(mod))
        for n in nested:
            if n in self.__dict__:
                self.__dict__[n] = FrozenModule(self.__dict__[n])
        self.__dict__["_kh_module"] = mod

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_kh_module"], name)


def _trunc(s: str, n: int = MAX_TEXT) -> str:
    return s if len(s) <= n else s[: n // 2] + "\n...[truncated]...\n" + s[-n // 2 :]


class CallPath:
    """Mixed into Worker, which sets the attributes used here (torch, device, cuda, models,
    flush buffer, poison sizes, captured torch functions, the opcount counter)."""

    def _seed(self, seed: int) -> None:
        """torch.manual_seed without its lazy cuda/xpu/mtia hooks (they cost ~2 ms per call)."""
        self._cpu_gen.manual_seed(seed)
        if self.cuda:
            self.torch.cuda.manual_seed(seed)

    def _inputs(self, seed: int) -> list[Any]:
        t = self.torch
        self._seed(seed)
        with t.device(self.device):
            inputs = list(self._get_inputs())
        return [x.to(self.device) if isinstance(x, t.Tensor) and x.device != self.device else x
                for x in inputs]

    def _poison(self) -> None:
        t = self.torch
        for n in self.poison_bytes:
            blk = t.empty(max(n // 4, 1), dtype=t.float32, device=self.device)
            self._tb.fill_(blk, float("nan"))
            del blk

    def _flush(self) -> None:
        if self.flush_buf is not None:
            self._tb.zero_(self.flush_buf)

    def _lead(self, us: float) -> None:
        """Keep the GPU busy for ``us`` before the start event (sandbox/timing/measure.py: the lead), so
        the host's start-record and launches are queued before the GPU reaches them."""
        if us > 0 and self._spin is not None and self._spin_rate > 0:
            self._spin(int(us * self._spin_rate))

    def _guard(self, step: str, native: bool = True, quick: bool = False) -> dict[str, Any] | None:
        """The candidate's hooks must not be around a trusted step (sandbox/rules/hooks.py). The reference
        worker runs no candidate code: what its own libraries install (Inductor, Triton) is not a hook."""
        if self.role == "reference":
            return None
        bad = self._hooks.found(native, quick)
        if bad:
            return {"ok": False, "kind": "hooks", "error": f"before the worker's {step}: " + "; ".join(bad)}
        return None

    def prepare(self, req: dict[str, Any]) -> dict[str, Any]:
        """First half of a call (untimed by the parent): the call's inputs in the arena
        (sandbox/worker/arena.py), blank tensors of the same sizes and strides for the call (``go``
        fills them from the arena), poison. The reference worker makes the inputs from the seed
        and writes them there itself (and, with ``stage``, the candidate's too); the candidate
        worker gets their header from the parent and never makes inputs."""
        t = self.torch
        w0 = _perf_ns()
        bad = self._guard("input generation")
        if bad:
            return bad
        self._collect_call()
        self.finish()
        # CPU burnt by other threads since the previous call's timed window ended: an honest
        # worker is idle there (OMP_WAIT_POLICY=PASSIVE); work pushed to a pool is not
        p_now, t_now = _ptime_ns(), _ttime_ns()
        self._bg_ns = _others_ns(self._mark, p_now, t_now)
        self._prep_mark = (p_now, t_now, _perf_ns())
        self._target = req["target"]
        self.last_out = None  # the previous snapshot's memory goes back to the allocator before the poison
        rep: dict[str, Any] = {"ok": True}
        try:
            if self.role == "reference":
                made = self._inputs(int(req["seed"]))
                entries = self._stage_inputs(t, made, self.arena.u8.get("ref_in"), "ref_in")
                if req.get("stage"):  # the same inputs for the candidate's next call
                    staged = self.stage({"seed": req["seed"]}, made)
                    if not staged["ok"]:
                        return staged  # kind "arena": the parent grows cand_in and asks again
                    rep["inputs"] = staged["inputs"]
                del made
                views = self._input_views(t, entries, self.arena.region("ref_in"))
            else:
                entries = req["inputs"]
                views = self._input_views(t, entries, self.arena.region("cand_in"))
        except ArenaTooSmall as e:
            return {"ok": False, "kind": "arena", "region": e.region, "need": e.need, "error": str(e)}
        given, self._fill = [], []
        for e, v in zip(entries, views, strict=True):
            if "value" in e:
                given.append(v)
                continue
            call, dst = self._blank(t, e, self.device)
            given.append(call)
            self._fill.append((dst, v))
        self._poison()
        self._pending = (given, views, entries)
        rep["prep_ns"] = _perf_ns() - w0
        return rep

    def stage(self, req: dict[str, Any], made: list[Any] | None = None) -> dict[str, Any]:
        """Reference only: the inputs of the candidate's next call, written into its region;
        kept here (private) to check later that the region still holds them."""
        t = self.torch
        if made is None:
            made = self._inputs(int(req["seed"]))
        try:
            entries = self._stage_inputs(t, made, self.arena.u8.get("cand_in"), "cand_in")
        except ArenaTooSmall as e:
            return {"ok": False, "kind": "arena", "region": e.region, "need": e.need, "error": str(e)}
        if self.arena.device_mode:  # written device to device: done before the candidate reads it
            t.cuda.synchronize()
        self.staged = (entries, made)
        return {"ok": True, "inputs": entries}

    def go(self, req: dict[str, Any], profiler: Any = None) -> dict[str, Any]:
        """Second half (the parent times this round trip): flush, clock, forward, sync."""
        w0 = _perf_ns()
        if self._pending is None:
            return {"ok": False, "kind": "protocol", "error": "go without prepare"}
        # inside the timed round trip, right after prepare's full check (no candidate code ran since):
        # the modes and traces only
        bad = self._guard("input copy", native=False, quick=True)
        if bad:
            return bad
        inputs = self._pending[0]
        model = self.models[self._target]
        pre = None  # from before the lead to the start event: GPU time the parent's clock also sees
        if self.cuda and profiler is None:  # a spin in a profiled window would read as a kernel
            pre = self._Event(enable_timing=True)
            pre.record()
            self._lead(float(req.get("lead_us", 0.0)))
        h0 = _perf_ns()
        tb, grad_was = self._tb, self._grad_enabled()
        self._set_grad(False)
        try:
            # the call's inputs are written now, on the timing stream behind the lead: work a
            # candidate queues where it does not follow that stream (a side stream, to overlap
            # the lead) reads the previous call's data and fails the timed-output checks
            for dst, src in self._fill:  # from the arena: device memory on a GPU (devarena.py)
                tb.copy_(dst, src, self.cuda)
            self._flush()
            if self.cuda:
                if profiler is not None:
                    profiler.start()
                    tb.zero_(self._marker)  # first kernel of the window: names the timing stream
                start, end = self._Event(enable_timing=True), self._Event(enable_timing=True)
                settled = self._settled
                if settled is None:  # torch makes an event's CUDA event at its first record: here, not
                    # after the sync below, where the driver call (10-100 us, serialized with other
                    # processes' context and allocation calls) would sit inside the tail
                    settled = self._settled = self._Event(enable_timing=True)
                    settled.record()
                self._arm(True)
                try:
                    start.record()
                    out = model(*inputs)
                    end.record()
                    enqueue_ns = _perf_ns() - h0
                    # the whole device at once, before any host step of ours: an event recorded
                    # after this sync (one made before the window, recorded again each call),
                    # minus the end event, is the sync's own latency plus the work the call left
                    # running past its end event, with no host time of the worker's in between
                    # (sandbox/timing/wallclock.py: the tail)
                    self._sync()
                    settled.record()
                    self._release(out, inputs)  # counted; on a GPU after the end event (host work)
                    outs, wrong = self._unpack(out)
                    self._witness()
                finally:
                    self._arm(False)
                # how long the device stays busy after the worker's host steps: work they set
                # off (a finalizer's launch) that outlasts them. Only the sync is timed, so the
                # steps' own host time, which differs between the candidate's calls and the
                # control's, is not in it (the tail after the worker's steps)
                h_drain = _perf_ns()
                self._sync()
                steps_tail_ns = _perf_ns() - h_drain
                elapsed_ns = int(start.elapsed_time(end) * 1e6)
                tail_ns = int(end.elapsed_time(settled) * 1e6)
                pre_ns = int(pre.elapsed_time(start) * 1e6) if pre is not None else 0
                self._mark = (_ptime_ns(), _ttime_ns())
                self._tmark = _threads_ns()
                if profiler is not None:
                    profiler.stop()
            else:
                if profiler is not None:
                    profiler.start()
                self._arm(True)
                pre_ns = tail_ns = steps_tail_ns = 0
                try:
                    t0 = _perf_ns()
                    out = model(*inputs)
                    self._release(out, inputs)  # the previous call's finalizers: timed and counted
                    elapsed_ns = enqueue_ns = _perf_ns() - t0
                    outs, wrong = self._unpack(out)  # still counted; runs nothing of the candidate's
                    self._witness()
                finally:
                    self._arm(False)
                self._mark = (_ptime_ns(), _ttime_ns())
                self._tmark = _threads_ns()
                if profiler is not None:
                    profiler.stop()
        except BaseException as e:  # noqa: BLE001
            kind = "compile_error" if _is_compile_exc(e) else "runtime_error"
            return {"ok": False, "kind": kind, "error": _trunc(_format_exc(e))}
        finally:
            self._set_grad(grad_was)
        del out
        bad = self._guard("output snapshot", native=False)  # anything left to call back into the candidate
        if bad:
            return bad
        if wrong:
            return {"ok": False, "kind": "output_type", "error": wrong}
        T = self._T
        # the output as it is when the call is over (forward returned; on a GPU, the device synced):
        # whatever a thread or pool writes later is not in it, so late work fails the checks
        # deterministically instead of racing the fetch. Both roles do it (same per-call overhead).
        self.last_out = [self._clone(tb.detach(o)) if type(o) is T else o for o in outs]
        if self.cuda:
            self._sync()
        self.last_unchanged = None  # computed by finish(), before the next request is served
        if not self.poison_bytes:
            self.poison_bytes = [tb.numel(o) * tb.element_size(o) for o in outs if type(o) is T][:4]
        self._fwd_ns = elapsed_ns
        return {"ok": True, "ns": elapsed_ns, "enqueue_ns": enqueue_ns, "pre_ns": pre_ns, "tail_ns": tail_ns,
                "steps_tail_ns": steps_tail_ns,
                "native_threads": len(_listdir("/proc/self/task")),
                "w_ns": _perf_ns() - w0, "bg_cpu_ns": self._bg_ns}

    def _unpack(self, out: Any) -> tuple[list[Any], str]:
        """``forward``'s return value as a list, still counted. The candidate's: exactly a
        ``torch.Tensor`` or a plain tuple/list of them, checked by type without calling anything
        of the object's (no iteration protocol, ``__len__``, ``__class__`` or repr of its own);
        else the reason. The reference's (trusted): any tuple/list, as before."""
        T, tp = self._T, type(out)
        if tp is T:
            return [out], ""
        if tp is tuple or tp is list:
            outs = list(out)  # a plain tuple/list: iterated in C
            if self.role != "candidate":
                return outs, ""
            for i, o in enumerate(outs):
                if type(o) is not T:
                    return outs, (f"forward returned a {tp.__name__} whose item {i} is {type.__repr__(type(o))}, "
                                  "not a plain torch.Tensor")
            return outs, ""
        if self.role != "candidate":
            return (list(out) if isinstance(out, (tuple, list)) else [out]), ""
        return [], (f"forward returned {type.__repr__(tp)}: only a plain torch.Tensor or a plain tuple/list of "
                    "them is accepted (a subclass or another object runs its own code when read)")

    def _release(self, out: Any, inputs: Any) -> None:
        """Keep this call's objects (its return value, its inputs) and let the previous call's go:
        their finalizers, ``__del__`` and weakref callbacks run here, inside this window. The
        candidate's worker, whose collector is off, collects its young garbage here too."""
        held, self._held = self._held, (out, inputs)
        del held
        if self._gc_off and _gc_count()[0] > GC_BATCH:
            _gc_collect(0)

    def bg_report(self, req: dict[str, Any]) -> dict[str, Any]:
        """Other threads' CPU since the last call's window ended and since its prepare (the
        judge asks after each output check: work done for a checked output, sandbox/check/calls.py)."""
        p_now, t_now, w_now = _ptime_ns(), _ttime_ns(), _perf_ns()
        pm = getattr(self, "_prep_mark", None)
        return {"ok": True, "since_call_ns": _others_ns(self._mark, p_now, t_now),
                "since_prepare_ns": _others_ns(pm, p_now, t_now),
                "window_ns": w_now - pm[2] if pm else 0,
                **_others_by_thread(self._tmark, self._own_tids)}

    def finish(self) -> None:
        """Inputs-unchanged check of the last call (runs before any later request is served):
        the call's tensors against the arena's bytes (the candidate's worker; that the arena
        itself is untouched is checked by the reference worker, sandbox/check/refcheck.py)."""
        if self._pending is None:
            return
        inputs, views, entries = self._pending
        self._pending = None
        if self.last_unchanged is None:
            ok = True
            for a, v, e in zip(inputs, views, entries, strict=True):
                if "value" in e:
                    continue
                b = (v.expand(e["shape"]) if "base" in e else v).to(self.device)
                if not (a.shape == b.shape and self._equal_nan(a, b)):  # sandbox/worker/equalcheck.py
                    ok = False
                    break
            self.last_unchanged = ok

    def call(self, req: dict[str, Any], profiler: Any = None) -> dict[str, Any]:
        """prepare + go in one request (correctness and profiled calls)."""
        rep = self.prepare(req)
        if not rep.get("ok"):
            return rep
        staged = rep.get("inputs")
        rep = self.go(req, profiler)
        if staged is not None:
            rep["inputs"] = staged
        if rep.get("ok") and self.role == "reference":  # sizes to poison before the candidate's calls
            tb = self._tb
            rep["out_bytes"] = [tb.numel(o) * tb.element_size(o) for o in self.last_out if type(o) is self._T]
        return rep

    def _arm(self, on: bool) -> None:
        if self._counting():
            self.opcount.arm(on)
            if on:
                self._call_pending, self._probe_ok = True, False


def _is_compile_exc(e: BaseException) -> bool:
    mod = type(e).__module__ or ""
    name = type(e).__name__
    text = str(e)
    return (mod.startswith("triton") and "Compil" in name) or "Error building extension" in text or (
        "CompilationError" in name
    )


def _format_exc(e: BaseException) -> str:
    return "".join(traceback.format_exception(type(e), e, e.__traceback__))
