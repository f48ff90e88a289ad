"""The judging worker: ``python -m sandbox.worker --role reference|candidate --socket PATH ...``.

Both roles run this same code so their per-call overheads are comparable. The worker
connects to the parent's socket first, then answers requests (sandbox/protocol.md in
docs/evaluator.md): ``setup`` (load the task at a profile, build the model), ``import``
(candidate only: monitors on, then import the candidate), ``call`` (one call: fresh inputs
from the given seed (reference) or from the arena (candidate), poison, flush, time, sync), ``fetch`` (copy the last output into the arena, sandbox/worker/arena.py),
``check`` (reference only: compare a candidate's output in the arena with its own, sandbox/check/refcheck.py),
``stage`` (reference only: the candidate's next inputs into the arena), ``arena`` (map it),
``profile`` (one call under torch.profiler), ``monitor`` (raw monitor data), ``exit``.
The worker never judges: it returns raw data; the parent computes the verdict.
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from sandbox.rules import profsummary
from sandbox.worker.callpath import (
    CallPath,
    FrozenModule,
    _format_exc,
    _is_compile_exc,
    _listdir,
    _trunc,
)
from sandbox.worker.counting import Counting
from sandbox.worker.threadcpu import threads_ns as _threads_ns

_globals = globals


class Worker(CallPath, Counting):
    """The requests of either role; one call's path (prepare, go, finish) is in CallPath, the
    candidate's counting state in Counting."""

    def __init__(self, role: str, scratch: str, device: str, cache_root: str,
                 shared: list[str] | None = None) -> None:
        import torch

        self.torch = FrozenModule(torch, nested=("cuda",))  # torch's functions as they were before any candidate code
        self._torch_module = torch
        self.role = role
        self.scratch = scratch
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.cache_root = cache_root
        self.shared = list(shared or [])
        self.module: Any = None
        self.models: dict[str, Any] = {}
        self.cand_mod: Any = None
        self.last_out: Any = None
        self.last_unchanged: bool | None = None
        self.kept: dict[str, Any] = {}  # candidate outputs kept by sandbox/check/refcheck.py (reference role)
        self.monitor: Any = None
        self.opcount: Any = None  # sandbox/rules/opcount.Counter in the candidate role, when the parent built it
        self.opcount_error: str | None = None
        self.n_fetch = 0
        self.poison_bytes: list[int] = []
        self.flush_buf = None
        self._mark: tuple[int, int] | None = None
        self._tmark: dict[int, int] | None = None  # each other thread's CPU at the mark
        self._own_tids: frozenset[int] = frozenset()
        self._pending: tuple[list[Any], list[Any]] | None = None
        self._fill: list[tuple[Any, Any]] = []  # (call tensor, arena view) pairs that go() copies
        self._bg_ns = 0
        self._target = ""
        self._Event = torch.cuda.Event
        self._settled: Any = None  # the tail's settled event, made once (sandbox/worker/callpath.py go)
        self._sync = getattr(torch._C, "_cuda_synchronize", None) or torch.cuda.synchronize  # device-wide, in C
        # the worker's own tensor operations, bound before any candidate code: TensorBase is a C type
        # (its methods cannot be replaced); torch.Tensor's are checked by sandbox/rules/hooks.py
        self._tb, self._T = torch._C.TensorBase, torch.Tensor
        self._grad_enabled, self._set_grad = torch._C.is_grad_enabled, torch._C._set_grad_enabled
        self._held: tuple[Any, Any] | None = None  # the last call's return value and inputs (callpath._release)
        self._graveyard: list[Any] = []  # the candidate's models of earlier profiles, never released
        self._gc_off = False  # the candidate's worker runs with the collector off (import_candidate)
        # per-call records of the op counter (callpath._collect_call), reported with the monitor report
        self._call_pending, self._probe_ok, self._fwd_ns = False, True, 0
        self._calls: dict[Any, int] = {}
        self._calls_overflow = self._probe_fail = self._own_ns = self._fwd_sum = 0
        self._lib = [0, 0]  # bridge calls, numpy calls on arrays
        self._own_namespaces: set[str] = set()
        self._linked: dict[str, Any] = {}
        self._scanned: set[str] = set()
        self._wrapped: set[int] = set()
        if role == "candidate":  # everything a later request imports, imported now (sys.modules is the candidate's to change)
            from torch.profiler import ProfilerActivity

            from sandbox.intake.task import exec_source
            from sandbox.isolation import seccomp
            from sandbox.rules import ownhooks, tripwires
            from sandbox.timing import control
            from sandbox.worker import warmup

            self._profile_cls, self._acts = warmup.profile_class(), ProfilerActivity
            self._Control, self._seccomp, self._exec_source = control.Control, seccomp, exec_source
            self._ownhooks, self._tripwires = ownhooks, tripwires
        self._spin = torch._C._cuda_sleep if hasattr(torch._C, "_cuda_sleep") else None
        self._spin_rate = 0.0
        from sandbox.worker import arena

        # captured before any candidate code is imported
        self.arena = arena.Mapping(torch, self.cuda)
        from sandbox.worker import devarena

        self._devarena = devarena
        self.staged: tuple[list[Any], list[Any]] | None = None  # reference: the candidate's inputs, kept
        self._stage_inputs, self._input_views, self._blank = arena.stage_inputs, arena.input_views, arena.blank
        self._out_layout, self._write_outs = arena.output_layout, arena.write_outputs
        self._take_fds: Any = None  # set by main(): receives the arena's fds (SCM_RIGHTS)
        from sandbox.rules.hooks import CEntries, Hooks

        self._hooks = Hooks(torch)  # before any candidate code: what counts as the candidate's hooks
        self._centries = CEntries(torch)
        self._cpu_gen = torch.default_generator
        self._equal = torch.equal
        from sandbox.worker import equalcheck

        self._equal_nan = equalcheck.make(torch)  # the inputs-unchanged comparison, in slices
        self._clone = torch.Tensor.clone
        self._warm()
        self._hooks.freeze()  # after the warm-up: its thread pools and profiler are the worker's own
        self._own_tids = frozenset(_threads_ns())  # so are the threads alive now (check_window)

    def _warm(self) -> None:
        """Start torch's thread pools, CUDA and the profiler before anything is counted."""
        from sandbox.worker import warmup

        self.flush_buf, self._marker = warmup.warm(self.torch, self.device, self.cuda)

    def warm_device(self, req: dict[str, Any]) -> dict[str, Any]:
        """The warm-up's GPU kernels (sandbox/worker/warmup.py), asked for once the device is held."""
        from sandbox.worker import warmup

        part = str(req.get("part", "all"))
        if self.cuda:
            rate = warmup.warm_device(self.torch, self.device, self.flush_buf, part)
            if part != "kernels":
                self._spin_rate = rate
        return {"ok": True, "spin_cycles_per_us": self._spin_rate}

    # -- requests ---------------------------------------------------------------------------
    def setup(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.role == "candidate":
            exec_source = self._exec_source
            if self.models:
                self._graveyard.append(self.models)  # never released: its finalizers never run in the worker's steps
        else:
            from sandbox.intake.task import exec_source

        t = self.torch
        mod = exec_source(req["task_source"], req["task_path"], "_kh_task")
        for k, v in req.get("overrides", {}).items():
            setattr(mod, k, v)
        self.module = mod
        self._get_inputs = mod.get_inputs  # captured: replacing the module attribute later has no effect
        keep_as = req.get("keep_as") if self.role == "reference" else None
        # the task check's draws (sandbox/intake/taskcheck.py) set up side by side, each under its own name
        self.models = dict(self.models) if keep_as else {}
        t.manual_seed(req["init_seed"])
        init = mod.get_init_inputs()
        if self.role == "reference":
            model = mod.Model(*init).to(self.device).eval()
            self.models[str(keep_as or "eager")] = model
            if req.get("compile"):
                self.models["compile"] = t.compile(model)
        else:
            t.manual_seed(req["init_seed"])
            init = mod.get_init_inputs()
            cls = getattr(self.cand_mod, req.get("entry", "ModelNew"), None)  # sandbox/intake/candidate.py
            if not (isinstance(cls, type) and issubclass(cls, t.nn.Module)):
                raise TypeError(f"{req.get('entry', 'ModelNew')} is {cls!r}, not an nn.Module subclass")
            self.models["candidate"] = cls(*init).to(self.device).eval()
        return {"ok": True}

    def import_candidate(self, req: dict[str, Any]) -> dict[str, Any]:
        from sandbox.build import buildcache, tritonkeys
        from sandbox.intake.task import exec_source
        from sandbox.rules import monitors

        tritonkeys.install()  # the harness's Triton autotune cache never changes what a kernel does
        buildcache.install(self.cache_root, self.shared)
        if req.get("opcount"):  # the module the parent built (sandbox/rules/opcount.py), loaded by path
            try:
                from sandbox.rules.opcount import Counter

                self.opcount = Counter(req["opcount"], req.get("opcount_sha256"))
                self._hooks.opcount = self.opcount
            except Exception as e:  # noqa: BLE001 - the judge falls back to the profiled call
                self.opcount_error = f"{type(e).__name__}: {e}"[:300]
        cr = self.cache_root
        oc = self.opcount
        if oc is not None:  # before the candidate: tripwires, library counts, what "its own" means
            self._counting_setup(req, cr)
        mon = monitors.Monitor(
            req["candidate_path"],
            [self.scratch, "/tmp", os.environ.get("TMPDIR", "/tmp"),
             *(os.path.join(cr, sub) for sub in ("triton", "cupy", "torch_extensions"))],
            req.get("hidden", []), guarded=[cr, *self.shared], dynamic_allowed=buildcache.ACTIVE)
        mon.snapshot(globals())
        mon.flag = oc.flag if oc is not None else None  # ctypes look-ups and audit hooks (sandbox/rules/tripwires.py)
        monitors.install(mon)
        self.monitor = mon
        # bound now, so replacing Monitor's methods later cannot blank the reports
        self._mon_changed, self._mon_threads = mon.changed_identities, mon.new_python_threads
        self._mon_events = mon.events
        mon.phase = "import"
        gc.disable()  # collected inside the windows only (sandbox/worker/callpath.py: _release)
        self._gc_off = True
        self._hooks.freeze()  # the state the guards compare with: the worker's, before any candidate code
        t0 = time.perf_counter()
        try:
            with open(req["candidate_path"]) as f:
                src = f.read()
            self.cand_mod = exec_source(src, req["candidate_path"], "_kh_candidate")
        except BaseException as e:  # noqa: BLE001 - any failure of candidate code is a verdict
            kind = "compile_error" if buildcache.STATS.get("in_build") or _is_compile_exc(e) else "runtime_error"
            buildcache.STATS["in_build"] = False
            return {"ok": False, "kind": kind, "error": _trunc(_format_exc(e)),
                    "compile_s": buildcache.STATS["compile_s"]}
        finally:
            mon.phase = "run"
        self._own_refresh(force=True)  # before the collection: the modules it made are young objects
        gc.collect()  # the import's garbage, while candidate code may still run (its import)
        st = buildcache.STATS
        return {"ok": True, "import_s": time.perf_counter() - t0, "cache_hits": st["hits"],
                **{k: st[k] for k in ("compile_s", "builds", "lite", "lite_fallbacks", "slim", "slim_fallbacks", "pch")}}

    def arena_map(self, req: dict[str, Any]) -> dict[str, Any]:
        """Map the arena's regions (their fds follow the request, SCM_RIGHTS), or remap the ones
        the parent grew (sandbox/worker/arena.py)."""
        names = [str(n) for n in req.get("names", [])]
        fds = self._take_fds(len(names)) if names else []
        if req.get("device"):  # GPU memory (sandbox/worker/devarena.py): made here or mapped from fds
            return self._devarena.request(self.arena, self.role, self.cuda, self.device, req, names, fds)
        if names:
            self.arena.adopt(names, fds)
        return {"ok": True, **self.arena.remap(req.get("sizes", {}))}

    def fetch(self, req: dict[str, Any]) -> dict[str, Any]:
        """Copy the last output into the arena's output region (sandbox/worker/arena.py); reply with
        its header. An output larger than the region (the parent's size bound) is not copied."""
        if self.last_out is None:
            return {"ok": False, "kind": "protocol", "error": "no call to fetch"}
        bad = self._guard("output fetch")
        if bad:
            return bad
        self.finish()
        self.n_fetch += 1
        try:
            entries, devices, need = self._out_layout(self.torch, self.last_out)
            u8 = self.arena.u8.get("out")
            rep = {"ok": True, "devices": devices, "inputs_unchanged": self.last_unchanged, "nbytes": need}
            if u8 is None or need > u8.numel():
                rep["too_big"] = need
                return rep
            self._write_outs(self.torch, self.last_out, entries, u8)
        except BaseException as e:  # noqa: BLE001
            return {"ok": False, "kind": "runtime_error", "error": f"output cannot be fetched: {e!r}"}
        rep["entries"] = entries
        return rep

    def profile(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.role == "candidate":
            profile, act = self._profile_cls, self._acts
        else:
            from torch.profiler import ProfilerActivity as act

            from sandbox.worker import warmup

            profile = warmup.profile_class()
        acts = [act.CPU] + ([act.CUDA] if self.cuda else [])
        prof = profile(activities=acts)
        rep = self.call(req, profiler=prof)
        if not rep.get("ok"):
            return rep
        rep.update(profsummary.summarize(prof.events(), own=self._own_namespaces))
        rep["own_namespaces"] = sorted(self._own_namespaces)
        oc = self.opcount
        if oc is not None and self.role == "candidate":  # the counter's state is judged before the profile
            rep["counter"] = {"flags": oc.flags(), "probe_failed": self._probe_fail + (not self._probe_ok),
                              "rf_enabled": oc.rf_enabled()}
        return rep

    def peaks(self, req: dict[str, Any]) -> dict[str, Any]:
        from sandbox.timing import sol

        name = self.torch.cuda.get_device_name(self.device) if self.cuda else "cpu"
        return {"ok": True, "device_name": name, "peaks": sol.measure(self.torch, self.device)}

    def set_poison(self, req: dict[str, Any]) -> dict[str, Any]:
        """Output sizes to poison before every call (from the reference's outputs)."""
        self.poison_bytes = [int(n) for n in req.get("bytes", [])][:8]
        return {"ok": True}

    def own_call(self, req: dict[str, Any]) -> dict[str, Any]:
        """Reference role, the task check (sandbox/intake/taskcheck.py): the reference's forward on
        inputs made from ``seed`` on this worker's device, its outputs kept as ``last_out``. A
        ``call`` stages the inputs in the arena for the candidate's worker; the check has none, and
        an 8 GiB input went to the host and back for each of its draws."""
        try:
            inputs = self._inputs(int(req["seed"]))
            grad_was = self._grad_enabled()
            self._set_grad(False)
            try:
                out = self.models[str(req.get("target", "eager"))](*inputs)
            finally:
                self._set_grad(grad_was)
            del inputs
            self.last_out = list(out) if isinstance(out, (tuple, list)) else [out]
            if self.cuda:
                self._sync()
        except BaseException as e:  # noqa: BLE001 - the reference's own failure: the check says so
            return {"ok": False, "kind": "runtime_error", "error": _trunc(_format_exc(e))}
        T = self._T
        return {"ok": True, "out_bytes": [o.numel() * o.element_size() for o in self.last_out if type(o) is T]}

    def trim(self, req: dict[str, Any]) -> dict[str, Any]:
        """Reference role, between the tasks of a task check: drop the models, outputs and kept
        outputs of the last task and hand the allocator's cached device memory back, so a worker
        that lives across tasks holds at most its current task's share of the GPU (the check runs
        beside judgements, each of which reserves its own: sandbox/lane/gpumem.py)."""
        import gc

        self.models, self.last_out, self.own_first = {}, None, None
        self.kept.clear()
        gc.collect()
        held = 0
        if self.cuda:
            self._sync()
            self.torch.cuda.empty_cache()
            held = int(self.torch.cuda.memory_reserved(self.device))
        return {"ok": True, "reserved_bytes": held}

    def device_name(self, req: dict[str, Any]) -> dict[str, Any]:
        name = self.torch.cuda.get_device_name(self.device) if self.cuda else "cpu"
        return {"ok": True, "device_name": name, "torch": self.torch.__version__}

    def control(self, req: dict[str, Any]) -> dict[str, Any]:
        """Set up the control callable (sandbox/timing/control.py) of the parent-clock cross-check: a
        spin of ``spin_us`` and blank outputs shaped like this worker's last outputs."""
        Control = self._Control

        if not self.cuda or self._spin is None or self._spin_rate <= 0:
            return {"ok": False, "kind": "protocol", "error": "the control needs a CUDA device and its spin"}
        us = min(max(float(req.get("spin_us", 20.0)), 5.0), 5000.0)
        self.models["control"] = Control(self.torch, self._spin, int(us * self._spin_rate), self.last_out or [])
        return {"ok": True, "spin_us": us}

    def seal(self, req: dict[str, Any]) -> dict[str, Any]:
        """The judging phase starts: from now on this process and its threads may not exec
        (a seccomp filter stacked on the jail's, sandbox/isolation/seccomp.py)."""
        pre: dict[str, Any] = {}
        if "triton" in req.get("prewarm", []) and self.cand_mod is None and self.cuda:
            from sandbox.worker import (
                tritonwarm,  # trusted code, no candidate loaded: before the seal
            )

            pre["triton"] = tritonwarm.run(self.scratch)
        if self.cand_mod is not None:
            self._own_refresh(force=True)  # builds a warm-up call made (a lazy build) are the candidate's too
        try:
            self._seccomp.install(deny_exec=True)
            return {"ok": True, "sealed": True, "prewarm": pre}
        except Exception as e:  # noqa: BLE001 - no seccomp here (a container's profile): recorded
            return {"ok": True, "sealed": False, "why": f"{type(e).__name__}: {e}"[:300], "prewarm": pre}

    def monitor_report(self, req: dict[str, Any]) -> dict[str, Any]:
        m = self.monitor
        hooks = self._hooks.found(native=True)
        oc = self.opcount
        rep: dict[str, Any] = {
            "ok": True,
            "aten_ops": oc.take() if oc is not None else None,
            "opcount_error": self.opcount_error,
            "events": list(self._mon_events) if m else [],
            "changed": self._mon_changed(_globals()) if m else [],
            "py_threads": self._mon_threads() if m else [],
            "native_threads": len(_listdir("/proc/self/task")),
            "c_entries": self._centries.changed(),
            "hooks": hooks + [f"a kernel was registered over {op}, which the worker's own steps run"
                              for op in self._hooks.dispatch_changed()],
        }
        if oc is not None:
            self._counting_report(rep, hooks)
        return rep
