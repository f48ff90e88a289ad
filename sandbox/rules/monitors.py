"""In-process monitors of the candidate worker, installed BEFORE candidate code is imported.

* an audit hook (``sys.addaudithook``; cannot be removed from Python) that blocks and records
  network use, writes outside the allowed dirs, reads of hidden dirs, subprocesses after the
  import phase (except from compiler toolchains such as Triton / cpp_extension), frame and
  gc introspection called from the candidate's own file, and attribute writes on timing
  classes;
* identity snapshots of the timing functions and of the worker's own globals;
* thread accounting (Python threads and native threads in /proc/self/task).

The monitors only *record*; the parent asks for the record and decides. They are one layer
among several (the parent's own clock, the separate reference process, the sandbox).
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import time
from typing import Any

from sandbox.rules import linkcheck, tripwires

_getattr_static = inspect.getattr_static  # captured before any candidate code is imported

TOOLCHAIN_MARKERS = ("/triton/", "torch/utils/cpp_extension", "/cupy/", "/torch/_inductor/",
                     "/cuda/bindings/", "/nvrtc", "/numba/")
WATCHED_EVENTS = frozenset({
    "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto", "socket.sendmsg",
    "socket.gethostbyname", "socket.__new__", "open", "os.system", "subprocess.Popen", "os.exec",
    "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn", "gc.get_objects",
    "gc.get_referrers", "gc.get_referents", "sys._getframe", "sys._current_frames", "sys.settrace",
    "sys.setprofile", "object.__setattr__", "ctypes.cdata", "sys.addaudithook", "ctypes.dlsym",
    "ctypes.dlsym/handle",
})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC



_CODE_DIRS = sorted({os.path.realpath(p) for p in (
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),  # the checkout / site-packages dir
    sys.prefix, sys.base_prefix)})

class Monitor:
    def __init__(self, candidate_file: str, allowed_write: list[str], hidden: list[str],
                 guarded: list[str] | None = None, dynamic_allowed: list[str] | None = None) -> None:
        self.candidate_file = candidate_file
        self.allowed_write = [os.path.realpath(p) for p in allowed_write if p]
        # writes under a guarded dir (the shared build cache) are allowed only inside the
        # paths listed in ``dynamic_allowed`` at that moment (the build in progress)
        self.guarded = [os.path.realpath(p) for p in (guarded or []) if p]
        self.dynamic_allowed = dynamic_allowed if dynamic_allowed is not None else []
        self.hidden = [os.path.realpath(p) for p in hidden if p]
        self.phase = "setup"  # setup -> import -> run
        self.events: list[dict[str, Any]] = []
        self._local = threading.local()
        self.watched_classes: tuple[type, ...] = ()
        self.identity: dict[str, Any] = {}
        self.threads_before: set[int] = set()
        self.flag: Any = None  # the op counter's tripwire bits (sandbox/rules/tripwires.py), when loaded

    # -- audit hook --------------------------------------------------------------------
    def _record(self, rule: str, what: str) -> None:
        if len(self.events) < 50:
            self.events.append({"rule": rule, "what": what[:300], "phase": self.phase})

    def _tripped(self, bit: int, rule: str, what: str) -> None:
        """A tripwire bit in the op counter (out of Python's reach), else a recorded event."""
        if self.flag is not None:
            self.flag(bit)
        else:
            self._record(rule, what)

    def _caller_is_candidate(self) -> bool:
        f = sys._getframe(2)
        for _ in range(3):
            if f is None:
                return False
            if f.f_code.co_filename == self.candidate_file:
                return True
            f = f.f_back
        return False

    def _from_toolchain(self) -> bool:
        f = sys._getframe(2)
        while f is not None:
            fn = f.f_code.co_filename
            if any(m in fn for m in TOOLCHAIN_MARKERS):
                return True
            f = f.f_back
        return False

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event not in WATCHED_EVENTS:  # fast path: most events (object.__getattr__, ...) are not ours
            return
        if self.phase == "setup" or getattr(self._local, "busy", False):
            return
        self._local.busy = True
        try:
            self._check(event, args)
        finally:
            self._local.busy = False

    def _check(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "sys.addaudithook":
            # an audit hook of the candidate's would run inside the worker's own steps (every
            # audited event); refused: an exception derived from RuntimeError aborts the addition
            self._tripped(256, "sandbox.hooks", "sys.addaudithook")
            raise RuntimeError("kernel-harness sandbox: audit hooks are not allowed")
        if event in ("ctypes.dlsym", "ctypes.dlsym/handle"):
            name = args[1] if len(args) > 1 else None
            cat = linkcheck.classify(name) if isinstance(name, str) else None
            if cat in tripwires.DLSYM_BITS:
                self._tripped(tripwires.DLSYM_BITS[cat], tripwires.RULES[tripwires.DLSYM_BITS[cat]][0],
                              f"ctypes looked up {name}")
            return
        if event in ("socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto",
                     "socket.sendmsg", "socket.gethostbyname", "socket.__new__"):
            if event == "socket.__new__" and len(args) > 1 and args[1] == 1:  # AF_UNIX
                return
            self._record("sandbox.network", f"{event} {args[1:3] if len(args) > 1 else ''}")
            raise PermissionError(f"kernel-harness sandbox: {event} is not allowed")
        if event == "open":
            self._check_open(args)
            return
        if event in ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn",
                     "os.fork", "os.forkpty", "pty.spawn"):
            if self.phase == "import" or self._from_toolchain():
                return
            self._record("sandbox.subprocess", f"{event} {str(args[:2])}")
            raise PermissionError(f"kernel-harness sandbox: {event} is not allowed while judged")
        if event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._getframe",
                     "sys._current_frames", "sys.settrace", "sys.setprofile"):
            if self._caller_is_candidate():
                self._record("sandbox.introspection", event)
                raise PermissionError(f"kernel-harness sandbox: {event} from candidate code")
            return
        if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__" \
                and self._caller_is_candidate():
            self._record("timing.timer_patched", f"replaced {args[1]} of {getattr(args[0], '__qualname__', '?')}")
            raise PermissionError("kernel-harness sandbox: rewriting function code is not allowed")
        if event == "object.__setattr__" and args and self.watched_classes:
            obj = args[0]
            if isinstance(obj, type) and issubclass(obj, self.watched_classes):
                self._record("timing.timer_patched", f"setattr {obj.__name__}.{args[1]}")
                raise PermissionError("kernel-harness sandbox: timing classes are read-only")
        if event == "ctypes.cdata" and self._caller_is_candidate():
            # reading raw process memory by address from candidate Python code
            self._record("sandbox.introspection", f"{event} {str(args[:1])[:80]}")
            raise PermissionError("kernel-harness sandbox: ctypes memory reads by address")

    def _check_open(self, args: tuple[Any, ...]) -> None:
        path, mode, flags = (list(args) + [None, None, None])[:3]
        if isinstance(path, int) or path is None:
            return
        if isinstance(path, bytes):
            path = path.decode(errors="replace")
        real = os.path.realpath(str(path))
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & WRITE_FLAGS
        )
        for h in self.hidden:
            if real == h or real.startswith(h + os.sep):
                self._record("sandbox.filesystem", f"open {real}")
                raise PermissionError(f"kernel-harness sandbox: {real} is off limits")
        if writing and not real.startswith("/dev/null"):
            # the harness's own code and interpreter are never writable, even where they lie
            # under an allowed dir (a checkout or venv in /tmp, as in CI clones)
            code = [c for c in _CODE_DIRS if real == c or real.startswith(c + os.sep)]
            more_specific = [a for a in [*self.allowed_write, *self.guarded]
                             if any(a.startswith(c + os.sep) for c in code)]  # e.g. a cache in the repo
            if code and not any(real == a or real.startswith(a + os.sep) for a in more_specific):
                self._record("sandbox.filesystem", f"write into the harness's code {real}")
                raise PermissionError(f"kernel-harness sandbox: writing {real} is not allowed")
            hit = [g for g in self.guarded if real == g or real.startswith(g + os.sep)]
            # inside a guarded dir only an allowed path that lies inside it counts (its JIT caches,
            # the build in progress), never one above it: with the cache under /tmp, /tmp's
            # allowance must not open the cache (a write there was refused by the read-only mount
            # alone and the verdict said nothing)
            inner = [a for a in [*self.allowed_write, *(os.path.realpath(x) for x in self.dynamic_allowed)]
                     if any(a == g or a.startswith(g + os.sep) for g in hit)]
            if hit and not any(real == a or real.startswith(a + os.sep) for a in inner):
                self._record("sandbox.filesystem", f"write into the shared build cache {real}")
                raise PermissionError(f"kernel-harness sandbox: writing {real} is not allowed")
            if not any(real == a or real.startswith(a + os.sep)
                       for a in [*self.allowed_write, *self.guarded]):
                self._record("sandbox.filesystem", f"write {real}")
                raise PermissionError(f"kernel-harness sandbox: writing {real} is not allowed")
        if real.startswith("/proc/") and ("/mem" in real or "/fd/" in real or real.endswith("/fd")):
            self._record("sandbox.introspection", f"open {real}")
            raise PermissionError(f"kernel-harness sandbox: {real} is off limits")

    # -- identity + threads ----------------------------------------------------------------
    def snapshot(self, worker_globals: dict[str, Any]) -> None:
        self._ti = timing_identities  # captured: later lookups could be patched
        self._enumerate = threading.enumerate
        self.identity = timing_identities(worker_globals)
        self.threads_before = {t.ident for t in threading.enumerate() if t.ident is not None}

    def changed_identities(self, worker_globals: dict[str, Any]) -> list[str]:
        now = self._ti(worker_globals)
        return sorted(k for k, v in self.identity.items() if now.get(k) is not v)

    def new_python_threads(self) -> list[str]:
        return [t.name for t in self._enumerate()
                if t.ident not in self.threads_before and t.is_alive()]


def timing_identities(worker_globals: dict[str, Any]) -> dict[str, Any]:
    import torch

    d: dict[str, Any] = {}
    for n in ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns",
              "sleep"):
        d[f"time.{n}"] = getattr(time, n)
    d["torch.cuda.synchronize"] = torch.cuda.synchronize
    d["torch.cuda.Event"] = torch.cuda.Event
    for n in ("record", "elapsed_time", "synchronize", "query", "wait"):
        d[f"torch.cuda.Event.{n}"] = getattr(torch.cuda.Event, n, None)
    d["torch.save"] = torch.save
    for n in ("clone", "equal", "cpu", "detach"):
        d[f"torch.Tensor.{n}"] = getattr(torch.Tensor, n)
    d["torch.equal"] = torch.equal
    for n in ("randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "normal", "empty",
              "zeros", "ones", "full", "arange", "tensor"):
        d[f"torch.{n}"] = getattr(torch, n, None)
    for n in ("to", "contiguous", "__add__", "__mul__", "__sub__", "__truediv__"):
        d[f"torch.Tensor.{n}"] = getattr(torch.Tensor, n, None)
    import json
    import socket
    import struct

    from sandbox.rules import hooks, linkcheck, ownhooks, profsummary
    from sandbox.timing import control
    from sandbox.worker import arena, callpath, channel, counting, equalcheck, tensorfmt, threadcpu

    d["socket.socket.sendall"] = socket.socket.sendall
    d["socket.socket.recv_into"] = socket.socket.recv_into
    d["json.dumps"], d["json.loads"] = json.dumps, json.loads
    d["struct.pack"] = struct.pack
    for cls in (hooks.Hooks, hooks.CEntries, control.Control):
        for k, v in vars(cls).items():
            if callable(v) and (not k.startswith("__") or k == "__call__"):
                d[f"{cls.__module__}.{cls.__name__}.{k}"] = v
    for cls in (arena.Mapping,):
        for k, v in vars(cls).items():
            if callable(v) and not k.startswith("__"):
                d[f"sandbox.worker.arena.{cls.__name__}.{k}"] = v
    for mod in (arena, callpath, channel, counting, equalcheck, hooks, linkcheck, ownhooks, profsummary, tensorfmt,
                threadcpu, tripwires, sys.modules[__name__]):
        for k, v in vars(mod).items():
            if callable(v) and not k.startswith("__"):
                d[f"{mod.__name__}.{k}"] = v
    oc = sys.modules.get("sandbox.rules.opcount")  # the aten-op counter's arm/take (custom-code rule)
    if oc is not None:
        for k, v in vars(oc.Counter).items():
            if callable(v) and not k.startswith("__"):
                d[f"sandbox.rules.opcount.Counter.{k}"] = v
    for k, v in worker_globals.items():
        if not k.startswith("__") and (callable(v) or isinstance(v, (int, float, str))):
            d[f"worker.{k}"] = v
        if isinstance(v, type) and v.__module__ in (worker_globals.get("__name__"), __name__, callpath.__name__,
                                                     counting.__name__):
            # every method as the class resolves it (its own and inherited, e.g. Worker's
            # CallPath methods): a method set on the class or on a base both change it
            for mk in dir(v):
                if not mk.startswith("__"):
                    mv = _getattr_static(v, mk)
                    if callable(mv) or isinstance(mv, (staticmethod, classmethod)):
                        d[f"worker.{k}.{mk}"] = mv
    for mk, mv in vars(Monitor).items():
        if callable(mv):
            d[f"Monitor.{mk}"] = mv
    return d


def install(monitor: Monitor) -> None:
    import torch

    monitor.watched_classes = (torch.cuda.Event,)
    sys.addaudithook(monitor.hook)
