"""What the candidate may have left around the worker's trusted steps (EVAL_RULES #29-#32; issue 25
class 1: candidate code that runs after the clock stops).

The worker's own steps in the candidate's process (copying the inputs in, snapshotting and
writing the output, comparing inputs) run torch and Python code, so anything that makes that
code call back into the candidate would let it work there, untimed and uncounted: a torch
function or dispatch mode left pushed, dispatch keys left in the thread's include/exclude sets, a
``sys.settrace``/``setprofile`` hook, a RecordFunction callback registered from C++ (the op
counter's own is set aside while checking), a garbage-collector callback or the collector turned
back on (the candidate's worker runs with it off: sandbox/worker/callpath.py), a signal handler (Python's
or native: the process's caught-signal mask) or an interval timer, a method of ``torch.Tensor`` or
a builtin replaced, a kernel registered over one of the ops the worker's steps run (checked at
each monitor report: the dispatcher's record of them), or a C entry point of a clock swapped
under an unchanged function object. ``found()`` is asked before each trusted step and right after
each call's window; anything it names makes the verdict ``rejected sandbox.hooks`` (the clock
swap: ``timing.timer_patched``).

``CEntries`` records, before the candidate is imported, the C function pointer and the first
bytes of machine code behind each clock builtin; a later difference means native code swapped
the entry point (#32) even though ``time.perf_counter_ns is time.perf_counter_ns`` still holds.
"""

from __future__ import annotations

import _signal
import builtins
import ctypes
import gc
import signal
import sys
import time
from typing import Any

_gettrace, _getprofile = sys.gettrace, sys.getprofile  # captured before candidate code runs
_gc_enabled, _gc_callbacks = gc.isenabled, gc.callbacks  # the collector's own list object
_getsignal, _getitimer = _signal.getsignal, _signal.getitimer  # the C functions (no enum conversion)
_SIGNALS = tuple(s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))
_TIMERS = tuple(getattr(signal, n) for n in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"))
_builtins_dict = vars(builtins)
# the builtins the worker's steps call (a replaced one would call back into the candidate there)
BUILTINS = ("len", "list", "tuple", "dict", "set", "type", "isinstance", "issubclass", "int", "float", "str",
            "bool", "zip", "max", "min", "sum", "any", "all", "sorted", "getattr", "setattr", "hasattr", "range",
            "enumerate", "iter", "next", "repr", "round", "abs", "id", "callable", "vars", "super", "open",
            "memoryview", "bytes", "map", "filter", "divmod", "hash", "format", "print")
# the ops the worker's own steps run in the candidate's process (sandbox/worker/callpath.py, arena.py):
# a kernel registered over one of them would run there
TRUSTED_OPS = ("aten::copy_", "aten::empty.memory_format", "aten::empty_strided", "aten::fill_.Scalar",
               "aten::zero_", "aten::clone", "aten::detach", "aten::alias", "aten::equal", "aten::nan_to_num",
               "aten::isnan", "aten::as_strided", "aten::view", "aten::reshape", "aten::expand", "aten::slice.Tensor",
               "aten::_to_copy", "aten::to.dtype", "aten::to.device", "aten::_reshape_alias", "aten::unsqueeze",
               "aten::_unsafe_view", "aten::lift_fresh", "aten::set_.source_Storage_storage_offset")


_LIBC_SIGNALS = (1 << 31) | (1 << 32)  # signals 32 and 33: glibc's own (thread cancellation, setxid), set lazily
# fault handlers (SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS) that libraries install
# when first used (a GPU driver, faulthandler): they run only on a fault, and a timer that could send
# one is checked (/proc/self/timers)
_FAULT_SIGNALS = sum(1 << (n - 1) for n in (4, 5, 6, 7, 8, 11, 31))
# LLVM's crash and interrupt handlers (SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGTERM,
# SIGXCPU, SIGXFSZ), installed the first time Triton (or Inductor, in the reference's compile
# baseline) compiles: on an H200 every honest Triton candidate and every torch.compile baseline was
# refused as "a native signal handler is installed" (docs/records/data/session12-2026-11-26/call5-*). None
# of them is sent by a timer of this process's (checked apart) and the worker has no other sender
_LIBRARY_SIGNALS = sum(1 << (n - 1) for n in (1, 2, 3, 10, 12, 13, 15, 24, 25))


def _sig_caught() -> int:
    """The caught-signal mask of this process (native handlers too), from /proc/self/status,
    without the C library's own signals."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return int(line.split(":", 1)[1].strip(), 16) & ~(_LIBC_SIGNALS | _FAULT_SIGNALS | _LIBRARY_SIGNALS)
    except (OSError, ValueError):
        pass
    return -1


def _posix_timers() -> int:
    """How many POSIX timers (timer_create) this process has: one can send any signal."""
    try:
        with open("/proc/self/timers") as f:
            return sum(1 for line in f if line.startswith("ID:"))
    except OSError:
        return 0
CLOCKS = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time_ns",
          "thread_time_ns", "time", "time_ns")
_CODE_BYTES = 16


def _c_entry(f: Any) -> tuple[int, bytes] | None:
    """(ml_meth pointer, first bytes of its code) of a builtin function (PyCFunctionObject)."""
    if type(f).__name__ != "builtin_function_or_method":
        return None
    try:
        ml = ctypes.c_void_p.from_address(id(f) + 2 * ctypes.sizeof(ctypes.c_void_p)).value
        meth = ctypes.c_void_p.from_address(ml + ctypes.sizeof(ctypes.c_void_p)).value if ml else None
        return (meth, ctypes.string_at(meth, _CODE_BYTES)) if meth else None
    except (ValueError, OSError):
        return None


class CEntries:
    def __init__(self, torch: Any) -> None:
        self.funcs = {f"time.{n}": getattr(time, n) for n in CLOCKS}
        sync = getattr(torch._C, "_cuda_synchronize", None)
        if sync is not None:
            self.funcs["torch._C._cuda_synchronize"] = sync
        self.before = {k: _c_entry(f) for k, f in self.funcs.items()}

    def changed(self) -> list[str]:
        return sorted(k for k, f in self.funcs.items() if _c_entry(f) != self.before[k])


class Hooks:
    """Bound before the candidate is imported; ``opcount``: the op counter (its foreign-callback
    check), when the worker has one. ``freeze()`` takes the state the checks compare with (again
    right before the import, once the worker has set its own)."""

    def __init__(self, torch: Any, opcount: Any = None) -> None:
        c = torch._C
        self._tf_len = getattr(c, "_len_torch_function_stack", None)
        self._td_len = getattr(c, "_len_torch_dispatch_stack", None)
        self._tls_in = getattr(c, "_dispatch_tls_local_include_set", None)
        self._tls_ex = getattr(c, "_dispatch_tls_local_exclude_set", None)
        self._ks_str = getattr(c, "_dispatch_keyset_to_string", None)  # a module function (pybind types' str can be replaced)
        self._dump = getattr(c, "_dispatch_dump", None)
        self._tensor_dict = vars(torch.Tensor)
        self.opcount = opcount
        self.freeze()

    def _tls(self) -> str:
        if not (self._tls_in and self._tls_ex and self._ks_str):
            return ""
        return self._ks_str(self._tls_in()) + "|" + self._ks_str(self._tls_ex())

    def _dispatch(self) -> dict[str, str]:
        out = {}
        for op in TRUSTED_OPS:
            try:
                out[op] = self._dump(op) if self._dump else ""
            except Exception:  # noqa: BLE001 - an op this torch does not have
                out[op] = ""
        return out

    def freeze(self) -> None:
        self._gc_on, self._gc_n = _gc_enabled(), len(_gc_callbacks)
        self._signals = {s: _getsignal(s) for s in _SIGNALS}
        self._caught, self._ptimers = _sig_caught(), _posix_timers()
        self._itimers = tuple(_getitimer(t) != (0.0, 0.0) for t in _TIMERS)  # armed before (a test runner's)
        self._builtins = tuple((k, _builtins_dict.get(k)) for k in BUILTINS)
        self._tensor = dict(self._tensor_dict)
        self._tls0 = self._tls()
        self._dispatch0 = self._dispatch()

    def dispatch_changed(self) -> list[str]:
        """Trusted ops whose kernels changed since ``freeze`` (about 0.5 ms: monitor reports only)."""
        now = self._dispatch()
        return [op for op, d in self._dispatch0.items() if now.get(op) != d]

    def found(self, native: bool = True, quick: bool = False) -> list[str]:
        """``native=False``: only the Python-level hooks (tens of microseconds), for the checks
        inside a timed call's round trip; a RecordFunction callback, a native signal handler and
        a timer stay in place, so the next full check (the next call's input copy, the output
        fetch) still sees them. ``quick``: the modes and traces alone (about a microsecond)."""
        out = []
        if self._tf_len is not None and self._tf_len() > 0:
            out.append("a torch function mode (TorchFunctionMode) is pushed")
        if self._td_len is not None and self._td_len() > 0:
            out.append("a torch dispatch mode (TorchDispatchMode) is pushed")
        if _gettrace() is not None:
            out.append("sys.settrace is set")
        if _getprofile() is not None:
            out.append("sys.setprofile is set")
        if quick:
            return out
        bd = _builtins_dict  # first: the checks below call builtins
        for k, v in self._builtins:
            if bd.get(k) is not v:
                out.append(f"the builtin {k} was replaced")
                return out
        if self._tls() != self._tls0:
            out.append("the thread's dispatch key sets were changed")
        if _gc_enabled() != self._gc_on:
            out.append("the garbage collector was turned back on")
        if len(_gc_callbacks) != self._gc_n:
            out.append("a garbage-collector callback (gc.callbacks) is registered")
        sigs = self._signals
        for s in _SIGNALS:
            if _getsignal(s) is not sigs[s]:
                out.append(f"a signal handler is set for signal {int(s)}")
                break
        td, t0 = self._tensor_dict, self._tensor
        if len(td) != len(t0) or any(td.get(k) is not v for k, v in t0.items()):
            out.append("a method of torch.Tensor was replaced or added")
        if native:
            if self.opcount is not None and self.opcount.foreign():
                out.append("a RecordFunction callback other than the harness's op counter is registered")
            if _sig_caught() != self._caught:
                out.append("a native signal handler is installed")
            armed = tuple(_getitimer(t) != (0.0, 0.0) for t in _TIMERS)
            if any(a and not b for a, b in zip(armed, self._itimers, strict=True)) or _posix_timers() > self._ptimers:
                out.append("an interval timer is armed")
        return out
        if self._tls() != self._tls0:
            out.append("the thread's dispatch key sets were changed")
        if _gc_enabled() != self._gc_on:
            out.append("the garbage collector was turned back on")
        if len(_gc_callbacks) != self._gc_n:
            out.append("a garbage-collector callback (gc.callbacks) is registered")
        sigs = self._signals
        for s in _SIGNALS:
            if _getsignal(s) is not sigs[s]:
                out.append(f"a signal handler is set for signal {int(s)}")
                break
        bd = _builtins_dict
        for k, v in self._builtins:
            if bd.get(k) is not v:
                out.append(f"the builtin {k} was replaced")
                break
        td, t0 = self._tensor_dict, self._tensor
        if len(td) != len(t0) or any(td.get(k) is not v for k, v in t0.items()):
            out.append("a method of torch.Tensor was replaced or added")
        if native:
            if self.opcount is not None and self.opcount.foreign():
                out.append("a RecordFunction callback other than the harness's op counter is registered")
            if _sig_caught() != self._caught:
                out.append("a native signal handler is installed")
            armed = tuple(_getitimer(t) != (0.0, 0.0) for t in _TIMERS)
            if any(a and not b for a, b in zip(armed, self._itimers, strict=True)) or _posix_timers() > self._ptimers:
                out.append("an interval timer is armed")
        return out
