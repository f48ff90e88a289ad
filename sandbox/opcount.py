"""Counts the aten ops that run inside ``forward``, on every call, without the profiler.

The custom-code rule (#2) first looked at one profiled call. A candidate that asks
``torch.autograd.profiler._is_profiler_enabled()`` (even through names built at run time,
red-team case 12d, finding F5) can run its own kernel on that call and torch on all the
others. This counter is a global RecordFunction callback in a tiny trusted C++ library (a C
interface, loaded with ctypes).
It is armed by the worker around ``model(*inputs)`` on every call: correctness, profiled and
timed. It never turns the profiler on, so an armed call looks like any other from Python.

The library is built once by the trusted parent (``ensure``) into the cache's ``trusted``
dir, which no worker can write, and the candidate worker loads it, after checking its hash
against the one the parent recorded, before importing the candidate. Only the candidate worker has it,
so the eager and compile baselines are timed without its ~0.2 us per op.

Limit: native code in the candidate could find and remove the callback. That is the
documented limit of an in-process sandbox (docs/redteam.md).
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

_SOURCE = r"""
#include <ATen/record_function.h>
#include <atomic>
#include <cstdint>
#include <cstring>
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

void add_ours() {
  g_handle = at::addGlobalCallback(
      at::RecordFunctionCallback(on_enter).scopes({at::RecordScope::FUNCTION}));
}
}  // namespace

extern "C" {
int kh_install() {
  if (g_handle == 0) add_ours();
  return g_handle != 0;
}

void kh_arm(int on) { g_armed.store(on != 0, std::memory_order_relaxed); }

// Any RecordFunction callback besides ours (sandbox/hooks.py): set ours aside, ask, put it back.
int kh_foreign() {
  if (g_handle == 0) return at::hasCallbacks();
  at::removeCallback(g_handle);
  bool foreign = at::hasCallbacks();
  add_ours();
  return foreign;
}

// The counts as "name\tcount\n" lines into buf, then cleared. Returns the text's length; when
// it does not fit in cap bytes nothing is written or cleared (the caller asks again, larger).
int64_t kh_take(char* buf, int64_t cap) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string out;
  for (const auto& kv : g_counts) {
    out += kv.first;
    out += '\t';
    out += std::to_string(kv.second);
    out += '\n';
  }
  const int64_t n = static_cast<int64_t>(out.size());
  if (n > cap) return n;
  std::memcpy(buf, out.data(), out.size());
  g_counts.clear();
  return n;
}
}
"""

NAME = "kh_opcount_v3"
# A plain shared library with a C interface, loaded with ctypes: only ATen's record_function.h is
# parsed (about 4 s of g++), not torch/extension.h and pybind11 (27 s through load_inline on a
# 2-core box, and it held up the first verdict of every batch on a fresh cache).


def _torch_paths() -> tuple[str, str, int, str]:
    """torch's include and lib dirs, its C++ ABI and a version stamp, without importing torch
    (the judging parent never does: a CUDA context or 2 s of imports it does not need)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("torch is not installed")
    root = list(spec.submodule_search_locations)[0]
    lib = os.path.join(root, "lib")
    c10 = next((os.path.join(lib, f) for f in sorted(os.listdir(lib)) if f.startswith("libc10.")), None)
    if c10 is None:
        raise ImportError(f"no libc10 in {lib}")
    with open(c10, "rb") as f:
        abi = int(b"__cxx11" in f.read())  # the new-ABI std::string in c10's exported names
    try:
        stamp = Path(root, "version.py").read_text()
    except OSError:
        stamp = ""
    st = os.stat(c10)
    return os.path.join(root, "include"), lib, abi, f"{stamp}|{st.st_size}|{st.st_mtime_ns}"


def _compiler() -> str:
    return os.environ.get("CXX") or "c++"


def _key(inc: str, abi: int, stamp: str, std: str) -> str:
    import hashlib

    h = hashlib.sha256()
    for part in (_SOURCE, stamp, inc, str(abi), std, _compiler()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _build(cache_root: str) -> str:
    """Compile the library into ``cache_root/<key>/`` (atomically: a finished file or none) and
    return its path; a second call finds it. Raises RuntimeError with the compiler's last words."""
    inc, lib, abi, stamp = _torch_paths()
    last = ""
    for std in ("c++20", "c++17"):
        d = Path(cache_root) / f"{NAME}-{_key(inc, abi, stamp, std)}"
        so = d / f"{NAME}.so"
        if so.exists():
            return str(so)
        d.mkdir(parents=True, exist_ok=True)
        me = f"{os.getpid()}.{threading.get_native_id()}"
        src, tmp = d / f"{NAME}.{me}.cpp", d / f".{NAME}.{me}.so"  # processes building at once never share a file
        src.write_text(_SOURCE)
        cmd = [_compiler(), f"-std={std}", "-O2", "-shared", "-fPIC", "-w", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
               "-I", inc, "-I", os.path.join(inc, "torch", "csrc", "api", "include"), str(src),
               "-L", lib, "-lc10", "-ltorch_cpu", f"-Wl,-rpath,{lib}", "-o", str(tmp)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        finally:
            src.unlink(missing_ok=True)
        if r.returncode == 0:
            os.replace(tmp, so)
            return str(so)
        tmp.unlink(missing_ok=True)
        last = (r.stderr.strip().splitlines() or [f"{cmd[0]} exit {r.returncode}"])[-1][:300]
    raise RuntimeError(f"building the op counter failed: {last}")


_READY: dict[str, tuple[str | None, str | None]] = {}  # cache root -> (built .so, why not), this process
_GUARD = threading.Lock()


def ensure(cache_root: str) -> tuple[str | None, str | None]:
    """Build the library into the cache at ``cache_root`` once (with the system's C++ compiler,
    against the torch this process imports), before any judgement's clock starts. Returns
    (path of the built library, None), or (None, why not): the judge then relies on the
    profiled call alone and says so in the verdict's evidence."""
    if os.environ.get("KH_NO_OPCOUNT"):
        return None, "disabled by KH_NO_OPCOUNT"
    with _GUARD:
        if cache_root not in _READY:
            try:
                _READY[cache_root] = (_build(cache_root), None)
            except (OSError, subprocess.SubprocessError, RuntimeError, ImportError) as e:
                _READY[cache_root] = (None, f"{type(e).__name__}: {e}"[:300])
        return _READY[cache_root]


def file_sha256(path: str) -> str:
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Counter:
    """The loaded library, held by the worker (bound functions, not looked up again). Loaded
    after torch: its libc10 and libtorch_cpu are the ones already in the process."""

    def __init__(self, path: str, sha256: str | None = None) -> None:
        import ctypes

        if sha256 is not None and file_sha256(path) != sha256:  # read-only to candidates; checked anyway
            raise RuntimeError(f"{path} does not have the hash the parent built it with")
        lib = ctypes.CDLL(path)  # the file ensure() built, by path: never a compile inside a judgement
        for name, res, args in (("kh_install", ctypes.c_int, []), ("kh_arm", None, [ctypes.c_int]),
                                ("kh_foreign", ctypes.c_int, []),
                                ("kh_take", ctypes.c_int64, [ctypes.c_char_p, ctypes.c_int64])):
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
        self._lib, self._arm, self._foreign, self._take = lib, lib.kh_arm, lib.kh_foreign, lib.kh_take
        self._buf = ctypes.create_string_buffer(1 << 16)
        self._mk = ctypes.create_string_buffer
        if not lib.kh_install():
            raise RuntimeError("RecordFunction callback not installed")
        self.take()

    def arm(self, on: bool) -> None:
        self._arm(1 if on else 0)

    def foreign(self) -> bool:
        return bool(self._foreign())

    def take(self) -> dict[str, int]:
        while True:
            n = self._take(self._buf, len(self._buf))
            if n <= len(self._buf):
                break
            self._buf = self._mk(2 * n)
        out: dict[str, int] = {}
        for line in self._buf.raw[:n].decode("utf-8", "replace").splitlines():
            name, _, count = line.rpartition("\t")
            out[name] = int(count)
        return out
