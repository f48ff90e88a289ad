"""Counts the ops that run inside ``forward``, on every call, without the profiler; and checks
that the counting itself was left working (sandbox/rules/opcount.cpp holds the C++).

The custom-code rule (#2) first looked at one profiled call. A candidate that asks
``torch.autograd.profiler._is_profiler_enabled()`` (even through names built at run time,
red-team case 12d, finding F5) can run its own kernel on that call and torch on all the
others. This counter is a global RecordFunction callback in a tiny trusted C++ library (a C
interface, loaded with ctypes). It is armed by the worker around ``model(*inputs)`` on every
call: correctness, profiled and timed. It never turns the profiler on, so an armed call looks
like any other from Python. Per call it also records the op trees (the outermost op and the ops
nested under it: sandbox/rules/partial.py), fires a probe the callback must see
(``custom_code.counter_disabled`` otherwise), and, where Python.h was found at build time,
counts calls into the candidate's own extension functions (with the time spent in them), the
tensor/numpy bridges and numpy's functions on arrays (sandbox/rules/ownhooks.py wraps them).

The library is built once by the trusted parent (``ensure``) into the cache's ``trusted``
dir, which no worker can write, and the candidate worker loads it, after checking its hash
against the one the parent recorded, before importing the candidate. Only the candidate worker
has it, so the eager and compile baselines are timed without its ~0.3 us per op.

Limit: native code in the candidate could find and remove the callback, or turn RecordFunction
off and on again inside one call. That is the documented limit of an in-process sandbox
(docs/evaluator.md, "Counting every call"); the link check (sandbox/rules/linkcheck.py) refuses
extensions that name those entry points.
"""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from sandbox.build.compileonce import compile_once, file_sha256

_SOURCE = (Path(__file__).with_name("opcount.cpp")).read_text()

NAME = "kh_opcount_v4"
# A plain shared library with a C interface, loaded with ctypes: only ATen's record_function.h and
# Python.h are parsed (about 5 s of g++), not torch/extension.h and pybind11 (27 s through
# load_inline on a 2-core box, and it held up the first verdict of every batch on a fresh cache).
# Python.h (the Python hooks: own calls, bridges, numpy) is optional: without it the library is
# built with the op counter alone and the worker says so (``Counter.has_py``).


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


def _key(inc: str, abi: int, stamp: str, std: str, py: str) -> str:
    import hashlib

    h = hashlib.sha256()
    for part in (_SOURCE, stamp, inc, str(abi), std, _compiler(), py):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _python_include() -> str:
    """Python.h's dir for the interpreter the workers run (the parent's), or "" without headers."""
    import sysconfig

    inc = sysconfig.get_paths().get("include") or ""
    return inc if os.path.exists(os.path.join(inc, "Python.h")) else ""


def _build(cache_root: str) -> str:
    """Compile the library into ``cache_root/<key>/`` (atomically: a finished file or none) and
    return its path; a second call finds it. With Python.h when it compiles, else without (the
    op counter alone). Raises RuntimeError with the compiler's last words."""
    inc, lib, abi, stamp = _torch_paths()
    pyinc = _python_include()
    last = ""
    for py in ([pyinc, ""] if pyinc else [""]):
        for std in ("c++20", "c++17"):
            def argv(src: Path, out: Path, std: str = std, py: str = py) -> list[str]:
                return [_compiler(), f"-std={std}", "-O2", "-shared", "-fPIC", "-w", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
                        "-I", inc, "-I", os.path.join(inc, "torch", "csrc", "api", "include"),
                        *(["-DKH_PY", "-I", py] if py else []), str(src),
                        "-L", lib, "-lc10", "-ltorch_cpu", f"-Wl,-rpath,{lib}", "-o", str(out)]

            so, last = compile_once(Path(cache_root) / f"{NAME}-{_key(inc, abi, stamp, std, py)}", NAME, _SOURCE,
                                    ".cpp", argv)
            if so is not None:
                return so
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



def _lines(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.split("\n"):  # not splitlines(): it also splits at \x1c-\x1e
        if not line:
            continue
        name, _, count = line.rpartition("\t")
        out[name] = int(count)
    return out


class Counter:
    """The loaded library, held by the worker (bound functions, not looked up again). Loaded
    after torch: its libc10 and libtorch_cpu are the ones already in the process. Loaded as a
    PyDLL (the GIL is held during its calls: the Python hooks touch Python objects)."""

    def __init__(self, path: str, sha256: str | None = None) -> None:
        import ctypes

        if sha256 is not None and file_sha256(path) != sha256:  # read-only to candidates; checked anyway
            raise RuntimeError(f"{path} does not have the hash the parent built it with")
        lib = ctypes.PyDLL(path)  # the file ensure() built, by path: never a compile inside a judgement
        for name, res, args in (("kh_install", ctypes.c_int, []), ("kh_arm", None, [ctypes.c_int]),
                                ("kh_foreign", ctypes.c_int, []), ("kh_probe", ctypes.c_int, []),
                                ("kh_rf_enabled", ctypes.c_int, []), ("kh_has_py", ctypes.c_int, []),
                                ("kh_armed", ctypes.c_int, []), ("kh_flag", None, [ctypes.c_int64]),
                                ("kh_flags", ctypes.c_int64, []),
                                ("kh_take", ctypes.c_int64, [ctypes.c_char_p, ctypes.c_int64]),
                                ("kh_take_trees", ctypes.c_int64, [ctypes.c_char_p, ctypes.c_int64])):
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
        self._lib, self._arm, self._foreign, self._take = lib, lib.kh_arm, lib.kh_foreign, lib.kh_take
        self._take_trees, self._probe, self._rf_enabled = lib.kh_take_trees, lib.kh_probe, lib.kh_rf_enabled
        self._armed, self.flag, self._flags = lib.kh_armed, lib.kh_flag, lib.kh_flags
        self.has_py = bool(lib.kh_has_py())
        if self.has_py:
            for name, res, args in (("kh_wrap", ctypes.c_int, [ctypes.py_object, ctypes.c_int]),
                                    ("kh_wrap_vectorcall", ctypes.c_int, [ctypes.py_object]),
                                    ("kh_set_ndarray", None, [ctypes.py_object]),
                                    ("kh_take_py", None, [ctypes.POINTER(ctypes.c_int64)])):
                f = getattr(lib, name)
                f.restype, f.argtypes = res, args
            self._py4 = (ctypes.c_int64 * 4)()
            self.wrap, self.wrap_vectorcall, self.set_ndarray = lib.kh_wrap, lib.kh_wrap_vectorcall, lib.kh_set_ndarray
            self._take_py = lib.kh_take_py
        self._buf = ctypes.create_string_buffer(1 << 16)
        self._mk = ctypes.create_string_buffer
        if not lib.kh_install():
            raise RuntimeError("RecordFunction callback not installed")
        self.take()
        self.take_trees()

    def arm(self, on: bool) -> None:
        self._arm(1 if on else 0)

    def foreign(self) -> bool:
        return bool(self._foreign())

    def probe(self) -> bool:
        """A RecordFunction fired now reached the counter (RecordFunction on, callback in place)."""
        return bool(self._probe())

    def rf_enabled(self) -> bool:
        return bool(self._rf_enabled())

    def armed(self) -> bool:
        return bool(self._armed())

    def flags(self) -> int:
        """The tripwires' bits (sandbox/rules/tripwires.py) set so far; never cleared."""
        return int(self._flags())

    def _text(self, fn) -> str:
        while True:
            n = fn(self._buf, len(self._buf))
            if n <= len(self._buf):
                return self._buf.raw[:n].decode("utf-8", "replace")
            self._buf = self._mk(2 * n)

    def take(self) -> dict[str, int]:
        """Every op counted since the last take (nested ones too), by name."""
        return _lines(self._text(self._take))

    def take_trees(self) -> dict[str, int]:
        """The op trees of the calls since the last take: ``outer\x1fnested\x1enested`` -> count."""
        return _lines(self._text(self._take_trees))

    def take_py(self) -> tuple[int, int, int, int]:
        """(own calls, ns in them, bridge calls, numpy calls on arrays) since the last take."""
        if not self.has_py:
            return (0, 0, 0, 0)
        self._take_py(self._py4)
        return tuple(self._py4)  # type: ignore[return-value]
