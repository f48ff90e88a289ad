"""The harness's Triton autotune cache must never change what a candidate computes.

A CUDA candidate's workers run with ``TRITON_CACHE_AUTOTUNING=1`` (sandbox/worker/session.py): an
autotuned kernel is tuned once, in the worker that builds or warms the candidate, and the judging
worker reads the result (sandbox/build/tritoncache.py). Triton then writes each tuning to disk in
``Autotuner.check_disk_cache`` (read in Triton 3.6.0, the lent H100's, and in Triton's main
branch): after benchmarking it ``json.dumps`` ``{"key": tuning_key, "configs_timings":
[(config.__dict__, timings), ...]}``. The tuning key holds the values of the arguments named in
``key=``; with a pointer argument (``key=['x_ptr']``) that value is the ``torch.Tensor`` itself,
``json.dumps`` raises ``TypeError`` out of the kernel's launch, and an honest kernel was judged
``runtime_error`` (issue 25). Without the variable (Triton's default, and every harness that
does not set it) the same kernel tunes in memory, per process, and runs.

So the decision is made per kernel and per key, by trusted code: ``install()`` wraps
``Autotuner.check_disk_cache`` so that a tuning whose key or configs are not plain values
(``int``, ``float``, ``str``, ``bool``, ``None``: what JSON writes and reads back unchanged) takes
Triton's own per-process path (benchmark, keep the result in memory: exactly what Triton does
without the variable, and for configs with pre-hooks, which it cannot write either); every other
tuning is cached as before. Patching happens lazily: a meta-path hook wraps the method when
``triton.runtime.autotuner`` is first imported, so a candidate that never imports Triton pays
nothing. The candidate worker calls ``install()`` before it imports the candidate
(sandbox/worker/main.py); it does nothing where the variable is not set.

Nothing else of Triton changes: the key's ``str()`` (part of Triton's cache file name) is never
formed for such a key, and the per-process tuning is bounded like any other first call (cheat #35,
a key that changes every call, is still ended by the per-call deadline).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from typing import Any

MODULE = "triton.runtime.autotuner"
ENV = "TRITON_CACHE_AUTOTUNING"
_PLAIN = (int, float, str, bool, type(None))
_MARK = "_kh_plain_keys_only"  # set on the wrapper: installed once per class


def plain(value: Any) -> bool:
    """A value JSON writes and reads back as the same value of the same type (exact types: an
    ``int`` subclass such as a tensor-like or an enum is not plain)."""
    return type(value) in _PLAIN


def cacheable(tuning_key: Any, configs: Any) -> bool:
    """Whether Triton can write this tuning to disk and read it back unchanged: every element of
    the key plain, every config's fields plain and its ``kwargs`` a dict of plain values."""
    try:
        if not all(plain(k) for k in tuning_key):
            return False
        for c in configs:
            fields = dict(vars(c))
            kwargs = fields.pop("kwargs", {})
            if not isinstance(kwargs, dict) or not all(isinstance(k, str) and plain(v) for k, v in kwargs.items()):
                return False
            if not all(plain(v) for v in fields.values()):
                return False
    except TypeError:  # a key or configs that are not iterables: not what Triton writes
        return False
    return True


def guard(cls: Any) -> bool:
    """Wrap ``cls.check_disk_cache`` (Triton's Autotuner); False when it has none or is done."""
    orig = getattr(cls, "check_disk_cache", None)
    if orig is None or getattr(orig, _MARK, False):
        return False

    def check_disk_cache(self: Any, tuning_key: Any, configs: Any, bench_fn: Any, *args: Any, **kw: Any) -> Any:
        if not cacheable(tuning_key, configs):
            bench_fn()  # Triton's own path for a tuning it cannot write: tuned here, kept in memory
            return False  # "not read from the disk cache", as Triton returns for it
        return orig(self, tuning_key, configs, bench_fn, *args, **kw)

    setattr(check_disk_cache, _MARK, True)
    check_disk_cache.__wrapped__ = orig  # type: ignore[attr-defined]
    check_disk_cache.__doc__ = orig.__doc__
    cls.check_disk_cache = check_disk_cache
    return True


class _Loader(importlib.abc.Loader):
    """The module's own loader, then the guard on its ``Autotuner``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        guard(getattr(module, "Autotuner", None))


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        for finder in sys.meta_path:  # whoever would have found it (a path entry, an editable install)
            find = None if isinstance(finder, _Finder) else getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                    return None
                spec.loader = _Loader(spec.loader)
                return spec
        return None


def install(module: str = MODULE, environ: Any = None) -> str:
    """Guard Triton's autotuner in this process where the environment turns its disk cache on:
    now if it is imported, else when it is. Returns what was done ("off", "patched", "hooked")."""
    env = os.environ if environ is None else environ
    if env.get(ENV, "").strip().lower() in ("", "0", "false", "off", "no"):
        return "off"  # Triton keeps tunings in memory only: nothing to guard
    loaded = sys.modules.get(module)
    if loaded is not None:
        guard(getattr(loaded, "Autotuner", None))
        return "patched"
    if not any(isinstance(f, _Finder) and f.name == module for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(module))
    return "hooked"
