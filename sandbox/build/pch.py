"""Precompiled ``torch/extension.h``, one per common flag set, for C++ builds (``KH_BUILD_PCH=1``).

Parsing ``torch/extension.h`` (396k preprocessed lines) is most of a ``load_inline`` C++ build:
on the 2-core development box a small kernel's ``main.cpp`` takes 43 CPU s stock and 59 s with
``-O3``; with a precompiled header 16 s and 22.5 s (2026-11-27, docs/performance.md). torch's own
``use_pch`` keeps one header inside torch's install tree, rebuilt whenever a build's flags differ
from the last one's (most published kernels pass ``-O3`` or ``-O2``), and it writes there from
whatever process builds; it was used only for candidates without flags.

Here the trusted parent builds one header per flag set of ``VARIANTS`` (none, ``-O2``, ``-O3``),
each with the exact compile line torch writes for ``main.cpp`` (read off torch's own ninja
writer), into a machine-wide folder beside the build cache (``home()``: ``$HARNESS_CACHE/pch``, or
``KH_PCH_DIR``),
which workers see read-only (it is one of their ``shared`` dirs). A build through the cache
(sandbox/build/buildcache.py) whose ``extra_cflags`` are exactly one of those sets, with no include
paths of its own, gets that header's folder as an include path: GCC looks for
``torch/extension.h.gch`` there before the header itself and uses it when it is valid for the
compile (same options and macros, the first include of the file); otherwise it reads the
folder's ``torch/extension.h``, which only includes torch's own (``#include_next``), so the build
parses the header as before. The include path is
not part of the build's cache key: the header stands for the same declarations, so the object is
the one the stock build makes. Nothing is written into torch's tree.

Each header is about 0.8 GB and takes 45-75 CPU s to build, once per machine, compiler, torch and
flag set (its folder is named by a hash of all of them). ``prepare(source)`` builds only the sets
a candidate's C++-only ``load_inline`` calls ask for (CUDA builds parse ``main.cpp`` slim:
sandbox/build/slim.py), under a file lock, so concurrent processes build each header once.

The folder is bounded: a header is begun only with ``KH_PCH_MIN_FREE_GIB`` (default 2) free on its
disk, and after one is built the least recently used beyond ``KH_PCH_KEEP`` (default 6: two torch
installs of three flag sets) are deleted (``prune``). A header the compiler could not write for a
reason of the machine (a full disk, a killed compiler) is tried again by a later build; one it
rejected is not, on this machine, for these flags. A CI run once filled its disk with headers of
torch installs long gone, and the full disk's failure was remembered as the header's.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import functools
import hashlib
import inspect
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sandbox.build.home import cache_base

VARIANTS: tuple[tuple[str, ...], ...] = ((), ("-O2",), ("-O3",))
HEADER = "torch/extension.h"
BUILD_TIMEOUT_S = 900
HEADER_BYTES = 0.8 * 2**30  # about the size of one header (755 MiB for torch 2.13 on GCC 12)
STOPPED = "the run stopped before the header was built"
_ABANDON = threading.Event()


def abandon() -> None:
    """The run was stopped (SIGINT, SIGTERM): a header being built is given up, its compiler killed
    and nothing of it kept, and none is begun until ``reset()``. A 75 s header build (more under load)
    held Ctrl-C for its whole length: the executor waits for the builds in flight (CI, session 23)."""
    _ABANDON.set()


def reset() -> None:
    _ABANDON.clear()


def abandoned() -> bool:
    return _ABANDON.is_set()


def enabled() -> bool:
    return os.environ.get("KH_BUILD_PCH") == "1"


def home() -> Path:
    """The machine-wide folder of the precompiled headers: ``KH_PCH_DIR``, else beside the build
    cache's root."""
    if os.environ.get("KH_PCH_DIR"):
        return Path(os.environ["KH_PCH_DIR"])
    return cache_base() / "pch"


@functools.lru_cache(maxsize=8)
def compile_line(flags: tuple[str, ...]) -> tuple[str, ...]:
    """The compiler and options torch's ninja file gives ``main.cpp`` for ``extra_cflags=flags``,
    without the extension's name (a macro the header does not use)."""
    from torch.utils import cpp_extension as ce

    write = ce._write_ninja_file_to_build_library
    with tempfile.TemporaryDirectory(prefix="kh-pch-probe-") as d:
        main = os.path.join(d, "main.cpp")
        Path(main).write_text("")
        given = {"path": os.path.join(d, "build.ninja"), "name": "kh_pch_probe", "sources": [main],
                 "extra_cflags": list(flags), "is_standalone": False}
        write(**{p: given.get(p, [] if p.startswith("extra_") else False) for p in inspect.signature(write).parameters})
        lines = dict(ln.split(" = ", 1) for ln in Path(d, "build.ninja").read_text().splitlines() if " = " in ln)
    opts = [o for o in shlex.split(lines.get("cflags", "")) + shlex.split(lines.get("post_cflags", ""))
            if not o.startswith("-DTORCH_EXTENSION_NAME=")]
    return (lines.get("cxx", "c++"), *opts)


def _identity(path: str | None) -> list[Any]:
    """A file's identity for the signature: its real path, size and modification time."""
    if not path:
        return [None]
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
        return [real, st.st_size, st.st_mtime_ns]
    except OSError:
        return [path]


@functools.lru_cache(maxsize=8)
def signature(flags: tuple[str, ...]) -> str:
    """What a header is valid for: the compile line, the compiler binary, torch and its header."""
    import torch
    from torch.utils import cpp_extension as ce

    line = compile_line(flags)
    doc = {"line": line, "cxx": _identity(shutil.which(line[0])), "torch": torch.__version__,
           "header": _identity(os.path.join(ce.include_paths()[0], HEADER)), "v": 1}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:24]


def folder(root: str | os.PathLike[str], flags: tuple[str, ...]) -> Path:
    return Path(root) / signature(flags)


def include_for(dirs: list[str] | tuple[str, ...] | list[Path], extra_cflags: Any) -> str | None:
    """In a worker: the include folder of a finished header for exactly these ``extra_cflags``
    under one of the read-only ``dirs``, or None (other flags, none built, PCH off)."""
    if not enabled():
        return None
    try:
        flags = tuple(extra_cflags or ())
        if flags not in VARIANTS:
            return None
        for d in dirs:
            f = folder(d, flags)
            if (f / "ok").is_file() and (f / (HEADER + ".gch")).is_file():
                return str(f)
    except Exception:  # noqa: BLE001 - a missing cut is slower, never wrong
        return None
    return None


def wanted(source: str) -> list[tuple[str, ...]]:
    """The flag sets of ``VARIANTS`` that the C++-only ``load_inline`` calls of ``source`` pass as
    literal ``extra_cflags`` (none given: the empty set). A guess of what to build ahead, never a
    rule: a build uses a header only when its real flags match one."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out: list[tuple[str, ...]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name != "load_inline":
            continue
        kws = {k.arg: k.value for k in node.keywords if k.arg}
        cuda = kws.get("cuda_sources", node.args[2] if len(node.args) > 2 else None)
        if cuda is not None and not (isinstance(cuda, ast.Constant) and cuda.value is None):
            continue  # a CUDA build: its main.cpp is parsed slim
        if "extra_include_paths" in kws:
            continue
        flags = kws.get("extra_cflags")
        try:
            got = () if flags is None else tuple(ast.literal_eval(flags))
        except Exception:  # noqa: BLE001 - not a literal sequence (a name, a number): nothing to prepare
            continue
        if got in VARIANTS and got not in out:
            out.append(got)
    return out


def ensure(flags: tuple[str, ...], root: str | os.PathLike[str] | None = None) -> tuple[float, str]:
    """In the trusted parent: build the header for ``flags`` under ``root`` (default ``home()``)
    unless it is there. (seconds spent building, why not built: "" when it is there)."""
    root = Path(root) if root is not None else home()
    try:
        f = folder(root, flags)
        if (f / "ok").is_file():
            _touch(f / "ok")
            return 0.0, ""
        root.mkdir(parents=True, exist_ok=True)
        with open(root / f"{f.name}.lock", "w") as lock:
            while True:  # one builder per header and machine; the others wait, unless the run stops
                if _ABANDON.is_set():
                    return 0.0, STOPPED
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    time.sleep(0.2)
            if (f / "ok").is_file():
                return 0.0, ""
            if (f / "failed").is_file():
                why = (f / "failed").read_text().strip()
                if not of_the_machine(0, why):
                    return 0.0, why
                (f / "failed").unlink()  # remembered by an older harness: the machine's, tried again
            short = no_room(root)
            if short:
                return 0.0, short
            took, why = _build(f, flags)
            if not why:
                prune(root, keep=f.name)
            return took, why
    except Exception as e:  # noqa: BLE001 - a missing cut is slower, never wrong
        return 0.0, f"{type(e).__name__}: {e}"


def _build(f: Path, flags: tuple[str, ...]) -> tuple[float, str]:
    line = compile_line(flags)
    out = f / (HEADER + ".gch")
    out.parent.mkdir(parents=True, exist_ok=True)
    wrapper = f / "pch-source.h"  # includes the header from torch's tree, as a system header like in a build
    wrapper.write_text(f"#include <{HEADER}>\n")
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    argv = [*line, "-x", "c++-header", str(wrapper), "-o", str(tmp)]
    t0 = time.monotonic()
    try:
        # its own process group: the driver (g++) runs cc1plus as a child, and both go on a stop
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    except OSError as e:
        return time.monotonic() - t0, f"{type(e).__name__}: {e}"
    try:
        while True:
            try:
                _, err = p.communicate(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                late = time.monotonic() - t0 > BUILD_TIMEOUT_S
                if late or _ABANDON.is_set():
                    _kill(p, tmp)
                    return time.monotonic() - t0, (f"TimeoutExpired: over {BUILD_TIMEOUT_S} s" if late else STOPPED)
    except BaseException:  # Ctrl-C in the thread that builds (a serial run judges in its main thread)
        _kill(p, tmp)
        raise
    if p.returncode != 0:
        tmp.unlink(missing_ok=True)
        why = f"the compiler failed ({p.returncode}): {err[-500:]}"
        if not of_the_machine(p.returncode, err):
            (f / "failed").write_text(why + "\n")  # not tried again on this machine for these flags
        return time.monotonic() - t0, why
    # GCC takes a header from the folder where it found the .gch it could not use (a second include,
    # other options): this one hands such an include on to torch's own, as if the folder were not there
    out.with_suffix("").write_text(f"#include_next <{HEADER}>\n")
    os.replace(tmp, out)
    took = time.monotonic() - t0
    (f / "ok").write_text(json.dumps({"argv": argv, "build_s": round(took, 1)}) + "\n")
    return took, ""


# what a compiler prints when the machine, not the header, stopped it
_MACHINE = ("No space left on device", "Disk quota exceeded", "Cannot allocate memory", "out of memory",
            "virtual memory exhausted", "Killed signal terminated program", "Read-only file system")


def of_the_machine(returncode: int, err: str) -> bool:
    """A failure a later build may not meet: a signal (the OOM killer, a stop) or a message of the
    machine's (a full disk, memory), not the header's own error."""
    return returncode < 0 or any(m in err for m in _MACHINE)


def min_free_bytes() -> int:
    try:
        return int(float(os.environ.get("KH_PCH_MIN_FREE_GIB", "2")) * 2**30)
    except ValueError:
        raise ValueError(f"KH_PCH_MIN_FREE_GIB={os.environ['KH_PCH_MIN_FREE_GIB']!r} is not a number of GiB "
                         "(the free disk a precompiled header is begun with; e.g. 2)") from None


def no_room(root: Path) -> str:
    """Why a header is not begun under ``root`` for want of disk, or "" when there is room."""
    need = max(min_free_bytes(), int(HEADER_BYTES))
    free = shutil.disk_usage(root).free
    if free >= need:
        return ""
    return (f"only {free / 2**30:.2f} GiB free under {root}; a header takes about {HEADER_BYTES / 2**30:.1f} GiB "
            f"and is begun with {need / 2**30:.1f} GiB free (KH_PCH_MIN_FREE_GIB); the build parses the header instead")


def keep_count() -> int:
    try:
        n = int(os.environ.get("KH_PCH_KEEP", "6"))
    except ValueError:
        n = -1
    if n < 1:
        raise ValueError(f"KH_PCH_KEEP={os.environ['KH_PCH_KEEP']!r}: the number of precompiled headers kept "
                         "must be a whole number of at least 1 (default 6)")
    return n


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):  # a read-only folder: the header stays, it only ages sooner
        os.utime(path)


def _last_use(d: Path) -> float:
    for name in ("ok", "failed"):
        with contextlib.suppress(OSError):
            return (d / name).stat().st_mtime
    with contextlib.suppress(OSError):
        return d.stat().st_mtime
    return 0.0


def prune(root: str | os.PathLike[str], keep: str = "", count: int | None = None) -> list[str]:
    """Delete the least recently used header folders under ``root`` beyond ``count`` (``KH_PCH_KEEP``),
    never ``keep`` nor one whose lock another process holds (being built). A header deleted while a
    compile reads it was opened already; a compile begun after finds no folder and parses torch's
    own header: slower, never wrong. The names deleted."""
    root = Path(root)
    count = keep_count() if count is None else count
    try:
        folders = [d for d in root.iterdir() if d.is_dir() and len(d.name) == 24 and d.name != keep]
    except OSError:
        return []
    folders.sort(key=_last_use, reverse=True)
    gone = []
    for d in folders[max(count - (1 if keep else 0), 0):]:
        try:
            with open(root / f"{d.name}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(d, ignore_errors=True)
                gone.append(d.name)
        except (BlockingIOError, OSError):
            continue
    return gone


def _kill(p: subprocess.Popen, tmp: Path) -> None:
    """The compiler's whole process group (the driver and its cc1plus), and its half-written header."""
    with contextlib.suppress(OSError):
        os.killpg(p.pid, signal.SIGKILL)
    p.communicate()
    tmp.unlink(missing_ok=True)


def shared() -> list[str]:
    """The folder to give workers read-only (their ``shared`` dirs), when the cut is on and it exists."""
    return [str(home())] if enabled() and home().is_dir() else []


def prepare(source: str) -> dict[str, Any]:
    """Before a candidate's build (trusted parent): make the headers its C++ builds can use.
    {"built_s": seconds spent building now, "not_built": {flags: why}} ({} with the cut off)."""
    if not enabled():
        return {}
    out: dict[str, Any] = {"built_s": 0.0}
    for flags in wanted(source):
        took, why = ensure(flags)
        out["built_s"] = round(out["built_s"] + took, 2)
        if why:
            out.setdefault("not_built", {})[" ".join(flags) or "(none)"] = why
    return out
