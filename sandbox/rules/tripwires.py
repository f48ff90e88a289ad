"""Python-level tripwires in the candidate worker, set before the candidate is imported: the
Python ways to switch the op counter off, to compute below the dispatcher, and to override torch's
kernels. Each records a bit in the op counter's C library (``Counter.flag``: out of reach of
Python-level tampering); the parent turns the bits into verdicts (``RULES``, sandbox/rules/customcode.py).

* ``torch._C._autograd._enable_record_function`` (also ``torch.autograd._enable_record_function``),
  ``_clear_callbacks`` and ``_set_empty_test_observer`` are replaced, wherever a loaded module
  holds them, by functions that only record: RecordFunction stays on and the counter keeps
  counting (``custom_code.counter_disabled``).
* ``_DispatchOperatorHandle.redispatch_boxed`` (``torch.ops.aten.mm.default.redispatch``) skips
  RecordFunction: a redispatch of a torch op inside ``forward`` is recorded
  (``custom_code.torch_compute``); the candidate's own ops may redispatch.
* ``torch._C._dispatch_library`` (every ``torch.library.Library``): the candidate may register
  ops in namespaces of its own (they become its own ops, sandbox/rules/ownhooks.py), but an ``IMPL`` or
  ``FRAGMENT`` library on a namespace torch had before the import (``aten``, ``_`` for
  fallbacks...) is refused (``PermissionError``) and recorded (``sandbox.hooks``): its kernels
  would run inside the worker's trusted steps. Registrations made by torch's own modules (a lazy
  import of torch._dynamo registers meta kernels) are allowed: what decides is the first frame
  outside torch's library machinery.

Native code can do each of these without Python (the link check covers the symbols it needs,
sandbox/rules/linkcheck.py); C-level limits are in docs/evaluator.md.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable
from typing import Any

from sandbox import rules

RF_TOGGLE, RF_CLEAR, RF_OBSERVER, REDISPATCH = 1, 2, 4, 8
DLSYM_RF, DLSYM_TORCH, DLSYM_LIBRARY, TORCH_OVERRIDE, AUDIT_HOOK = 16, 32, 64, 128, 256
# bit -> (rule id, what it means); the parent reads them (sandbox/rules/customcode.py)
RULES = {
    RF_TOGGLE: (rules.COUNTER_DISABLED, "switched RecordFunction off from Python (_enable_record_function)"),
    RF_CLEAR: (rules.COUNTER_DISABLED, "cleared the RecordFunction callbacks (_clear_callbacks)"),
    RF_OBSERVER: (rules.COUNTER_DISABLED, "replaced the RecordFunction observers (_set_empty_test_observer)"),
    DLSYM_RF: (rules.COUNTER_DISABLED, "looked up a RecordFunction switch with ctypes"),
    REDISPATCH: (rules.TORCH_FALLBACK, "redispatched a torch op below the dispatcher (redispatch_boxed)"),
    DLSYM_TORCH: (rules.TORCH_FALLBACK, "looked up a torch kernel below the dispatcher with ctypes"),
    DLSYM_LIBRARY: (rules.LIBRARY_COMPUTE, "looked up a compute library's entry point with ctypes"),
    TORCH_OVERRIDE: (rules.HOOKS, "registered kernels into a torch op namespace (torch.library IMPL/FRAGMENT)"),
    AUDIT_HOOK: (rules.HOOKS, "added an audit hook (sys.addaudithook)"),
}
DLSYM_BITS = {"record_function": DLSYM_RF, "below_dispatcher": DLSYM_TORCH, "library": DLSYM_LIBRARY}
_LIBRARY_MACHINERY = (f"{os.sep}torch{os.sep}library.py", f"{os.sep}torch{os.sep}_library{os.sep}",
                      f"{os.sep}torch{os.sep}_ops.py", f"{os.sep}torch{os.sep}_custom_op")


def describe(bits: int) -> list[tuple[str, str]]:
    """(rule, what) for each bit set, in RULES order."""
    return [rw for b, rw in RULES.items() if bits & b]


def _replace_everywhere(swaps: dict[int, tuple[Any, Any]]) -> None:
    """Every loaded module's global bound to an original (by identity) now names its tripwire."""
    for mod in list(sys.modules.values()):
        if type(mod) is not types.ModuleType:
            continue
        d = vars(mod)
        for k, v in list(d.items()):
            hit = swaps.get(id(v))
            if hit is not None and hit[0] is v:
                d[k] = hit[1]


def _registrant_is_torch(torch_dirs: tuple[str, ...]) -> bool:
    """Whether the first frame outside torch's library machinery is torch's own code (a lazy
    import of a torch module registering kernels) rather than the candidate's."""
    try:
        raise RuntimeError
    except RuntimeError as e:  # a frame without sys._getframe (no audit event)
        f = e.__traceback__.tb_frame if e.__traceback__ else None
    f = f.f_back if f is not None else None  # our caller: the tripwire
    while f is not None:
        fn = f.f_code.co_filename
        if f.f_code.co_filename != __file__ and not any(m in fn for m in _LIBRARY_MACHINERY):
            return any(fn.startswith(d + os.sep) for d in torch_dirs)
        f = f.f_back
    return False


def install(torch: Any, counter: Any, namespaces_before: set[str], own: set[str],
            is_op: Callable[[str, set[str]], bool]) -> None:
    """Set the tripwires (once, before the candidate is imported). ``own`` collects the op
    namespaces the candidate registers (sandbox/rules/ownhooks.py reads it)."""
    flag = counter.flag
    A = torch._C._autograd

    def _enable_record_function(enable: bool = True) -> None:
        flag(RF_TOGGLE)  # RecordFunction stays on: the counter keeps counting

    def _clear_callbacks() -> None:
        flag(RF_CLEAR)

    def _set_empty_test_observer(*args: Any, **kwargs: Any) -> None:
        flag(RF_OBSERVER)

    swaps = {}
    for name, trip in (("_enable_record_function", _enable_record_function), ("_clear_callbacks", _clear_callbacks),
                       ("_set_empty_test_observer", _set_empty_test_observer)):
        orig = getattr(A, name, None)
        if orig is not None:
            swaps[id(orig)] = (orig, trip)
    _replace_everywhere(swaps)

    H = torch._C._DispatchOperatorHandle
    redispatch = H.redispatch_boxed
    armed = counter.armed

    def redispatch_boxed(self: Any, keyset: Any, *args: Any, **kwargs: Any) -> Any:
        if armed():
            try:
                name = str(self.schema().name)
            except Exception:  # noqa: BLE001
                name = "?::?"
            if is_op(name, own):
                flag(REDISPATCH)
        return redispatch(self, keyset, *args, **kwargs)

    H.redispatch_boxed = redispatch_boxed

    library = torch._C._dispatch_library
    torch_dirs = (os.path.dirname(torch.__file__), os.path.dirname(os.path.realpath(torch.__file__)))

    def _dispatch_library(kind: Any, ns: str, *args: Any, **kwargs: Any) -> Any:
        k = str(getattr(kind, "name", kind))
        if not _registrant_is_torch(torch_dirs):
            if (ns in namespaces_before or ns == "_") and k in ("IMPL", "FRAGMENT"):
                flag(TORCH_OVERRIDE)
                raise PermissionError(f"kernel-harness: a {k} library on torch's op namespace {ns!r} is not allowed "
                                      "(its kernels would run inside the judge's own steps)")
            if ns not in namespaces_before:
                own.add(ns)
        return library(kind, ns, *args, **kwargs)

    torch._C._dispatch_library = _dispatch_library
