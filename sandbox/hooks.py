"""What the candidate may have left around the worker's trusted steps (EVAL_RULES #29-#32).

The worker's own steps in the candidate's process (making the call's inputs, copying them in,
snapshotting and writing the output, comparing inputs) run torch code, so anything that
intercepts torch calls would see, and could do, the work there, untimed and uncounted: a torch
function or dispatch mode left pushed, a ``sys.settrace``/``setprofile`` hook, a global
RecordFunction callback registered from C++ (the op counter's own is set aside while checking),
or a C entry point of a clock swapped under an unchanged function object. ``found()`` is asked
before each trusted step; anything it names makes the verdict ``rejected sandbox.hooks`` (the
clock swap: ``timing.timer_patched``).

``CEntries`` records, before the candidate is imported, the C function pointer and the first
bytes of machine code behind each clock builtin; a later difference means native code swapped
the entry point (#32) even though ``time.perf_counter_ns is time.perf_counter_ns`` still holds.
"""

from __future__ import annotations

import ctypes
import sys
import time
from typing import Any

_gettrace, _getprofile = sys.gettrace, sys.getprofile  # captured before candidate code runs
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
    check), when the worker has one."""

    def __init__(self, torch: Any, opcount: Any = None) -> None:
        c = torch._C
        self._tf_len = getattr(c, "_len_torch_function_stack", None)
        self._td_len = getattr(c, "_len_torch_dispatch_stack", None)
        self.opcount = opcount

    def found(self, native: bool = True) -> list[str]:
        """``native=False``: only the Python-level hooks (about a microsecond), for the checks
        inside a timed call's round trip; a RecordFunction callback stays registered, so the
        next full check (the next call's input generation, the output fetch) still sees it."""
        out = []
        if self._tf_len is not None and self._tf_len() > 0:
            out.append("a torch function mode (TorchFunctionMode) is pushed")
        if self._td_len is not None and self._td_len() > 0:
            out.append("a torch dispatch mode (TorchDispatchMode) is pushed")
        if _gettrace() is not None:
            out.append("sys.settrace is set")
        if _getprofile() is not None:
            out.append("sys.setprofile is set")
        if native and self.opcount is not None and self.opcount.foreign():
            out.append("a RecordFunction callback other than the harness's op counter is registered")
        return out
