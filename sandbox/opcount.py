"""Counts the aten ops that run inside ``forward``, on every call, without the profiler.

The custom-code rule (#2) first looked at one profiled call. A candidate that asks
``torch.autograd.profiler._is_profiler_enabled()`` (even through names built at run time,
red-team case 12d, finding F5) can run its own kernel on that call and torch on all the
others. This counter is a global RecordFunction callback in a tiny trusted C++ extension.
It is armed by the worker around ``model(*inputs)`` on every call: correctness, profiled and
timed. It never turns the profiler on, so an armed call looks like any other from Python.

The extension is built once by the trusted parent (``ensure``) into the cache's ``trusted``
dir, which no worker can write, and the candidate worker loads it, after checking its hash
against the one the parent recorded, before importing the candidate. Only the candidate worker has it,
so the eager and compile baselines are timed without its ~0.2 us per op.

Limit: native code in the candidate could find and remove the callback. That is the
documented limit of an in-process sandbox (docs/redteam.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/record_function.h>
#include <atomic>
#include <map>
#include <mutex>
#include <string>

namespace {
std::atomic<bool> g_armed{false};
std::mutex g_mu;
std::map<std::string, int64_t> g_counts;
at::CallbackHandle g_handle = 0;

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (g_armed.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_counts[fn.name()] += 1;
  }
  return nullptr;
}
}  // namespace

bool kh_install() {
  if (g_handle == 0) {
    g_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(on_enter).scopes({at::RecordScope::FUNCTION}));
  }
  return g_handle != 0;
}

void kh_arm(bool on) { g_armed.store(on, std::memory_order_relaxed); }

// Any RecordFunction callback besides ours (sandbox/hooks.py): set ours aside, ask, put it back.
bool kh_foreign() {
  if (g_handle == 0) return at::hasCallbacks();
  at::removeCallback(g_handle);
  bool foreign = at::hasCallbacks();
  g_handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_enter).scopes({at::RecordScope::FUNCTION}));
  return foreign;
}

std::map<std::string, int64_t> kh_take() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::map<std::string, int64_t> out;
  out.swap(g_counts);
  return out;
}
"""

_FUNCTIONS = ["kh_install", "kh_arm", "kh_take", "kh_foreign"]
NAME = "kh_opcount_v2"
_PAYLOAD = {"cpp": _SOURCE, "cuda": None, "functions": _FUNCTIONS}  # what buildcache keys _build() by


def _build() -> Any:
    from torch.utils.cpp_extension import load_inline

    return load_inline(name=NAME, cpp_sources=_SOURCE, functions=_FUNCTIONS, verbose=False)


_READY: dict[str, tuple[str | None, str | None]] = {}  # cache root -> (built .so, why not), this process
_GUARD = threading.Lock()


def ensure(cache_root: str) -> tuple[str | None, str | None]:
    """Build the extension into the cache at ``cache_root`` once per process, in a child
    process (the parent's own ``load_inline`` stays unpatched), before any judgement's clock
    starts. Returns (path of the built module, None), or (None, why not): the judge then
    relies on the profiled call alone and says so in the verdict's evidence."""
    if os.environ.get("KH_NO_OPCOUNT"):
        return None, "disabled by KH_NO_OPCOUNT"
    with _GUARD:
        if cache_root in _READY:
            return _READY[cache_root]
        from sandbox.buildcache import built_module

        hit = built_module(cache_root, "inline", _PAYLOAD)
        if hit:  # built before (by any process): no child needed
            _READY[cache_root] = (str(hit), None)
            return _READY[cache_root]
        code = ("import sys; from sandbox import buildcache; buildcache.install(sys.argv[1]); "
                "from sandbox.opcount import _build; print('KH_OPCOUNT_PATH=' + _build().__file__)")
        repo = str(Path(__file__).resolve().parent.parent)
        env = {k: v for k, v in os.environ.items() if k != "KH_BUILD_PCH"}  # keeps the payload _PAYLOAD
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH")]))
        try:
            r = subprocess.run([sys.executable, "-c", code, cache_root], capture_output=True, text=True,
                               timeout=1800, env=env)
            path = next((ln.split("=", 1)[1] for ln in r.stdout.splitlines() if ln.startswith("KH_OPCOUNT_PATH=")),
                        None)
            res = (path, None) if r.returncode == 0 and path else \
                (None, (r.stderr.strip().splitlines() or ["failed"])[-1][:300])
        except (OSError, subprocess.SubprocessError) as e:
            res = (None, f"{type(e).__name__}: {e}"[:300])
        _READY[cache_root] = res
        return res


def file_sha256(path: str) -> str:
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Counter:
    """The loaded extension, held by the worker (bound functions, not looked up again)."""

    def __init__(self, path: str, sha256: str | None = None) -> None:
        import importlib.util

        if sha256 is not None and file_sha256(path) != sha256:  # read-only to candidates; checked anyway
            raise RuntimeError(f"{path} does not have the hash the parent built it with")

        # load the module ensure() built, by path: never a compile inside a judgement
        spec = importlib.util.spec_from_file_location(Path(path).name.split(".")[0], path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        self._arm, self._take, self.foreign = mod.kh_arm, mod.kh_take, mod.kh_foreign
        if not mod.kh_install():
            raise RuntimeError("RecordFunction callback not installed")
        self._take()

    def arm(self, on: bool) -> None:
        self._arm(on)

    def take(self) -> dict[str, int]:
        return dict(self._take())
