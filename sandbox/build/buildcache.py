"""Content-addressed build cache for ``torch.utils.cpp_extension.load_inline`` / ``load``.

Installed in the candidate worker before the candidate is imported. Each build goes to
``<dir>/<sha256>`` where the hash covers the sources, functions, flags, torch / CUDA /
Python versions and the arch list; the module name is derived from the hash, a per-hash
``fcntl`` lock serialises concurrent builds of the same source, and a finished build (marker
file ``.ok``) is imported directly without running the compiler again.

Tiers under the cache root (``layout``), so that no candidate can plant a build another loads:

* ``shared/``: written only by trusted processes (the harness's warm-ups, the tests'); every
  worker mounts it read-only and loads from it first;
* ``cand/<candidate hash>/``: one candidate's own builds (and its Triton/cupy caches), mounted
  read-write only into that candidate's workers, so what it writes there only it ever loads;
* ``trusted/``: the harness's own helpers (sandbox/rules/opcount.py), built by the parent, read-only
  to workers and hash-checked before loading.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

from sandbox.build import pch as pchset
from sandbox.build.home import cache_base
from sandbox.build.slim import STOCK_MAIN, slim_sources

STATS: dict[str, Any] = {"compile_s": 0.0, "builds": 0, "hits": 0, "in_build": False, "lite": 0,
                         "lite_fallbacks": 0, "slim": 0, "slim_fallbacks": 0, "pch": 0}
ACTIVE: list[str] = []  # paths of the build in progress: the only cache paths Python may write


def default_root() -> Path:
    return cache_base() / "build"


def _key(kind: str, payload: dict[str, Any]) -> str:
    import torch

    meta = {
        "kind": kind,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "arch": os.environ.get("TORCH_CUDA_ARCH_LIST", ""),
        "python": sys.version.split()[0],
        "payload": payload,
    }
    return hashlib.sha256(json.dumps(meta, sort_keys=True, default=str).encode()).hexdigest()


def layout(root: str | os.PathLike[str], candidate_source: str) -> tuple[str, str, str]:
    """(shared tier, this candidate's own dir, trusted helpers' dir) under the cache ``root``."""
    own = hashlib.sha256(candidate_source.encode()).hexdigest()[:32]
    r = Path(root)
    return str(r / "shared"), str(r / "cand" / own), str(r / "trusted")


def entry(root: str | os.PathLike[str], kind: str, payload: dict[str, Any]) -> tuple[Path, str]:
    """Where a build lives in the cache at ``root``: its directory and module name."""
    h = _key(kind, payload)
    return Path(root) / h, f"kh_{h[:20]}"


def built_module(root: str | os.PathLike[str], kind: str, payload: dict[str, Any]) -> Path | None:
    """The finished build's module file, if the cache at ``root`` has one."""
    d, name = entry(root, kind, payload)
    so = d / f"{name}.so"
    return so if (d / ".ok").exists() and so.exists() else None


# KH_BUILD_LITE=1 (a compile cut, harness/executors/cuts.py): drop ``#include <torch/extension.h>``
# from CUDA sources. load_inline already puts <torch/types.h> (ATen, torch:: factories, TORCH_CHECK)
# at the top of every CUDA source; extension.h adds torch/all.h (nn, optim, autograd API, data,
# serialize) and pybind11, which device code rarely needs, and nvcc parses it three times (cudafe++,
# cicc, host gcc). A source that does not build without it is built again unchanged, and that
# outcome is remembered in the cache (``.failed``), so the cut never turns a good build into a bad one.
_EXT_H = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/extension\.h[>"][^\n]*$', re.M)
_NEEDS_EXT_H = ("PYBIND11_", "py::", "pybind11", "torch::nn", "torch::optim", "torch::jit", "torch::data")
_LITE_NOTE = "// kernel-harness compile cut: torch/extension.h not included here (load_inline includes torch/types.h)"


def lite_cuda_sources(cuda_sources: Any) -> Any:
    """The CUDA sources without ``#include <torch/extension.h>``; None when there is nothing to
    cut or the source visibly needs what only extension.h declares."""
    if not cuda_sources:
        return None
    srcs = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources)
    if not all(isinstance(x, str) for x in srcs):
        return None
    joined = "\n".join(srcs)
    if not _EXT_H.search(joined) or any(k in joined for k in _NEEDS_EXT_H):
        return None
    out = [_EXT_H.sub(_LITE_NOTE, x) for x in srcs]
    return out[0] if isinstance(cuda_sources, str) else out


def _files_payload(sources: Any) -> list[tuple[str, str]]:
    out = []
    for s in [sources] if isinstance(sources, str) else list(sources):
        try:
            out.append((os.path.basename(s), Path(s).read_text(errors="replace")))
        except OSError:
            out.append((s, ""))
    return out


_PCH_GUARD = threading.Lock()
_NOT_BUILT = object()  # a cut tier whose build failed (load_inline itself may return None)


class _WouldBuildPch(Exception):
    pass


class _NoPchBuild:
    """Stands in for ``subprocess`` inside torch's PCH check: running the compiler on
    ``extension.h`` (a PCH (re)build) raises instead; every other call goes through."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def check_output(self, args: Any, *a: Any, **kw: Any) -> Any:
        argv = args.split() if isinstance(args, str) else [str(x) for x in args]
        if any(x.endswith("extension.h.gch") for x in argv):
            raise _WouldBuildPch
        return self._real.check_output(args, *a, **kw)


def pch_read_only(ce: Any) -> None:
    """Make torch's precompiled-header support read-only in this process (idempotent).

    Stock ``load_inline`` writes into torch's include dir: with ``use_pch=True`` it (re)builds
    ``torch/extension.h.gch`` and writes ``extension.h.sign`` whenever the header is missing or
    was built with other flags (the candidate's own ``extra_cflags`` / include paths, another
    compiler or ccache on PATH); with ``use_pch=False`` (the default) it deletes both. In the
    jail the first is a write outside the cache (``sandbox.filesystem``, or a failed PCH build:
    ``runtime_error``), and the second, run by any unjailed build on the machine (a trusted warm
    build, the op counter's builder), pulls the header from under concurrent jailed builds: the
    verdict then depended on the compile cut and on timing (issue 15, item 2).

    Here: deleting is a no-op (GCC checks a ``.gch`` against each compile's options and
    macros and parses the header instead when they differ), and the check uses the header
    only when it is already valid for these flags, building nothing otherwise. ``use_pch``
    changes nothing else in ``load_inline``, so it is a build-speed option only, as it should be.
    The original check stays reachable as ``ce._kh_build_pch``."""
    if getattr(ce, "_kh_build_pch", None) is not None:
        return
    check = getattr(ce, "_check_and_build_extension_h_precompiler_headers", None)
    if check is None:
        return
    ce._kh_build_pch = check
    ce.remove_extension_h_precompiler_headers = lambda: None

    def check_read_only(extra_cflags: Any = None, extra_include_paths: Any = None,
                        is_standalone: bool = False) -> None:
        with _PCH_GUARD:  # the swap is process-wide: one check at a time
            _check_once(extra_cflags, extra_include_paths, is_standalone)

    def _check_once(extra_cflags: Any, extra_include_paths: Any, is_standalone: bool) -> None:
        real = ce.subprocess
        ce.subprocess = _NoPchBuild(real)
        try:
            check(extra_cflags, extra_include_paths, is_standalone)
            STATS["torch_pch"] = STATS.get("torch_pch", 0) + 1  # the header is valid for these flags: used
        except _WouldBuildPch:
            STATS["torch_pch_skipped"] = STATS.get("torch_pch_skipped", 0) + 1  # missing or other flags
        finally:
            ce.subprocess = real

    ce._check_and_build_extension_h_precompiler_headers = check_read_only


def install(root: str | os.PathLike[str], shared: list[str] | tuple[str, ...] = ()) -> None:
    """Wrap cpp_extension.load_inline / load so builds go through the cache at ``root``;
    a finished build in one of the read-only ``shared`` dirs is loaded from there first."""
    from torch.utils import cpp_extension as ce

    root_p = Path(root)
    root_p.mkdir(parents=True, exist_ok=True)
    shared_p = [Path(d) for d in shared]
    orig_inline, orig_load = ce.load_inline, ce.load
    # torch's own precompiled extension.h (a candidate's use_pch=True) is never written or deleted
    # by a build through this cache (``pch_read_only``); KH_BUILD_PCH=1: the trusted parent's headers
    # per flag set (sandbox/build/pch.py), found under a shared dir, given as an include path
    pch_read_only(ce)

    lite = os.environ.get("KH_BUILD_LITE") == "1"
    slim = os.environ.get("KH_BUILD_SLIM") == "1"

    class _CutFailed(Exception):
        pass

    def cached(kind: str, payload: dict[str, Any], build: Any, is_python_module: bool, cut: bool = False) -> Any:
        for sp in shared_p:  # a trusted build: load it, never write there
            sd, sname = entry(sp, kind, payload)
            if is_python_module and (sd / ".ok").exists():
                try:
                    mod = ce._import_module_from_library(sname, str(sd), True)
                    STATS["hits"] += 1
                    return mod
                except ImportError:
                    pass
        d, name = entry(root_p, kind, payload)
        if is_python_module and (d / ".ok").exists():  # finished (``.ok`` is written last): no lock,
            try:  # so a judging worker that mounts its build dir read-only loads it (sandbox/judge.py)
                mod = ce._import_module_from_library(name, str(d), True)
                STATS["hits"] += 1
                return mod
            except ImportError:
                pass
        if cut and (d / ".failed").exists():  # a cut remembered as failed: skipped without the lock, which a
            raise _CutFailed  # judging worker with the cache read-only cannot take (session 30: a false runtime_error)
        h = d.name
        ACTIVE[:] = [str(d), str(root_p / f"{h}.lock")]
        try:
            return _locked(h, name, d, build, is_python_module, cut)
        except OSError as e:  # a cut tier the build worker did not leave here, in a cache this worker
            if cut and e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):  # reads only (a sealed judging
                raise _CutFailed from e  # worker): the next tier, which it did build (session 30)
            raise
        finally:
            ACTIVE.clear()

    def _locked(h: str, name: str, d: Path, build: Any, is_python_module: bool, cut: bool) -> Any:
        d.mkdir(parents=True, exist_ok=True)
        with open(root_p / f"{h}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            # torch's own build lock (a 'lock' file it waits on forever) outlives a build that was
            # killed mid-compile (a timeout, a killed run); our flock already serialises builders
            (d / "lock").unlink(missing_ok=True)
            if cut and (d / ".failed").exists():
                raise _CutFailed
            if (d / ".ok").exists() and is_python_module:
                try:
                    mod = ce._import_module_from_library(name, str(d), True)
                    STATS["hits"] += 1
                    return mod
                except ImportError:
                    (d / ".ok").unlink(missing_ok=True)
            t0 = time.perf_counter()
            STATS["in_build"] = True
            try:
                mod = build(name, str(d))
            except Exception as e:
                if not cut:
                    raise
                (d / ".failed").write_text(f"{type(e).__name__}\n")
                raise _CutFailed from e
            finally:
                STATS["in_build"] = False
                STATS["compile_s"] += time.perf_counter() - t0
            STATS["builds"] += 1
            (d / ".ok").write_text("ok\n")
            return mod

    def load_inline(name: str, cpp_sources: Any, cuda_sources: Any = None, *args: Any, **kw: Any) -> Any:
        params = dict(zip(
            ["sycl_sources", "functions", "extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags",
             "extra_ldflags", "extra_include_paths", "build_directory", "verbose", "with_cuda"],
            args, strict=False,
        ))
        params.update(kw)
        params.pop("build_directory", None)
        payload = {"cpp": cpp_sources, "cuda": cuda_sources,
                   **{k: v for k, v in params.items() if k != "verbose"}}
        pch_dir = None if params.get("extra_include_paths") else pchset.include_for(shared_p, params.get("extra_cflags"))
        is_py = params.get("is_python_module", True)

        def with_pch(kw: dict[str, Any]) -> dict[str, Any]:
            """The build's arguments with the precompiled header's folder as its include path (not in
            the cache key: the header stands for the same declarations)."""
            return kw if pch_dir is None else {**kw, "extra_include_paths": [pch_dir]}

        def pch_noted(mod: Any, kw: dict[str, Any]) -> Any:
            """Count a finished build given the header (GCC uses it where it is valid for the compile:
            tests/conformance/test_pch.py checks that it is for torch's compile line)."""
            if pch_dir is not None and kw.get("extra_include_paths") == [pch_dir]:
                STATS["pch"] += 1
            return mod

        def cut_tier(name: str, cut: str, cpp: Any, cuda: Any, kw: dict[str, Any]) -> Any:
            """The build of these cut sources, or _NOT_BUILT when they do not build (remembered)."""
            try:
                mod = cached("inline", {**payload, "cpp": cpp, "cuda": cuda, "cut": cut},
                             lambda n, d: pch_noted(orig_inline(n, cpp, cuda, build_directory=d, **kw), kw), is_py,
                             cut=True)
            except _CutFailed:
                STATS[f"{name}_fallbacks"] += 1
                return _NOT_BUILT
            STATS[name] += 1
            return mod

        slimmed = slim_sources(cpp_sources, cuda_sources) if slim and not params.get("no_implicit_headers") else None
        if slimmed is not None:  # KH_BUILD_SLIM: the headers the code can use (sandbox/build/slim.py)
            s_params = {**params, "no_implicit_headers": True}
            if slimmed[0][0] == STOCK_MAIN:
                s_params = with_pch(s_params)  # main.cpp kept torch/extension.h
            mod = cut_tier("slim", "slim-v1", *slimmed, s_params)
            if mod is not _NOT_BUILT:
                return mod
        cut_cuda = lite_cuda_sources(cuda_sources) if lite else None
        if cut_cuda is not None:  # KH_BUILD_LITE: try without torch/extension.h first
            mod = cut_tier("lite", "no-extension-h", cpp_sources, cut_cuda, with_pch(params))
            if mod is not _NOT_BUILT:
                return mod
        return cached(
            "inline", payload,
            lambda n, d: pch_noted(orig_inline(n, cpp_sources, cuda_sources, build_directory=d, **with_pch(params)),
                                   with_pch(params)),
            is_py,
        )

    def load(name: str, sources: Any, *args: Any, **kw: Any) -> Any:
        params = dict(zip(
            ["extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags", "extra_ldflags",
             "extra_include_paths", "build_directory", "verbose", "with_cuda"],
            args, strict=False,
        ))
        params.update(kw)
        params.pop("build_directory", None)
        payload = {"files": _files_payload(sources), **{k: v for k, v in params.items() if k != "verbose"}}
        is_py = params.get("is_python_module", True) and not params.get("is_standalone", False)
        return cached("load", payload, lambda n, d: orig_load(n, sources, build_directory=d, **params), is_py)

    load_inline.__wrapped__ = orig_inline  # type: ignore[attr-defined]  # its signature, for slim.py
    load.__wrapped__ = orig_load  # type: ignore[attr-defined]
    ce.load_inline = load_inline
    ce.load = load
    import torch.utils

    torch.utils.cpp_extension = ce  # same module object; keeps `from ... import load_inline` working
