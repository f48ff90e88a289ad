"""Whose GPU kernel is it? (issue 25, class 3 on CUDA: torch compute not counted as torch).

A kernel launched inside ``forward`` whose launch is not under an ``aten::`` op was counted as
the candidate's own. A C++ extension can reach torch's and NVIDIA's kernels below the dispatcher
(``at::cuda::mm``, cuBLAS through torch's handle): on an H200 both launched the same
``sm80_xmma_gemm_..._cublas`` kernels as ``torch.mm``, with no aten op above them
(docs/records/data/session12-2026-11-26/call1-probe-attribution.log). Op names cannot close that class;
kernel names can:

* **the libraries' kernels**: every kernel symbol in torch's CUDA libraries and NVIDIA's math
  libraries (cuBLAS, cuBLASLt, cuDNN, cuFFT, cuRAND, cuSPARSE, cuSOLVER), listed once per machine
  by the trusted parent with ``cuobjdump -symbols`` and demangled with binutils ``c++filt`` (the
  demangler the profiler's names come from), cached by the libraries' paths, sizes and times;
* **the candidate's kernels**: the symbols of the modules built from its sources (its own build
  tier), plus the kernel names its source declares (``__global__`` functions in its CUDA/C++
  strings, ``@triton.jit`` functions, cupy ``RawKernel``/``get_function`` names).

A launched kernel is the candidate's own only when it is one of the candidate's kernels and no
library ships a kernel of that name; a name no source declares (kernels that torch.compile,
cupy's ufuncs or another library generate at run time) is nobody's own. Names that copy the
patterns of torch's generated code (Inductor's ``triton_poi_``/``triton_red_``/... and cupy's
``cupy_``) are not accepted from a candidate's source.

Where it ends: a candidate kernel that copies a library kernel's exact name is not counted as its
own (rare, and named in the verdict); the lists come from files the parent reads, not from the
launch itself, so a launch is matched by name, not by the module that holds it.
"""

from __future__ import annotations

import ast
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

CANDIDATE, LIBRARY, FOREIGN = "candidate", "library", "foreign"

# kernels named like torch's and cupy's generated code are not taken from a candidate's source
GENERATED = re.compile(r"^(triton_(poi|red|per|tem|for|spl|unk|mm|bmm|helper)_|cupy_)")
_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")
_GLOBAL = re.compile(r"__global__\s+(?:[\w:<>,*&\s]+?\s+)?([A-Za-z_]\w*)\s*(?:<[^>{;]*>)?\s*\(")
_RAW = re.compile(r"(?:RawKernel|ElementwiseKernel|ReductionKernel)\s*\((?:[^()]|\([^()]*\))*?['\"]([A-Za-z_]\w*)['\"]\s*[,)]"
                  r"|get_function\s*\(\s*['\"]([A-Za-z_]\w*)['\"]")
_LIB_GLOBS = (
    "{torch}/lib/libtorch_cuda*.so*", "{torch}/lib/libc10_cuda.so*", "{torch}/lib/libcaffe2_nvrtc.so*",
    "{site}/nvidia/*/lib/libcublas*.so*", "{site}/nvidia/*/lib/libcudnn*.so*", "{site}/nvidia/*/lib/libcufft*.so*",
    "{site}/nvidia/*/lib/libcurand*.so*", "{site}/nvidia/*/lib/libcusparse*.so*",
    "{site}/nvidia/*/lib/libcusolver*.so*", "{site}/nvidia/*/lib/libnccl*.so*",
    "{cuda}/lib64/libcublas*.so*", "{cuda}/lib64/libcudnn*.so*", "{cuda}/lib64/libcufft*.so*",
    "{cuda}/lib64/libcurand*.so*", "{cuda}/lib64/libcusparse*.so*", "{cuda}/lib64/libcusolver*.so*",
)
SYMBOLS_TIMEOUT_S = 120.0


def base_name(kernel: str) -> str:
    """``void ns::k<int, 4>(float const*, int)`` -> ``ns::k``: the qualified name without its
    return type, template arguments and parameters."""
    s = kernel.strip().replace("(anonymous namespace)", "{anon}")
    out, depth_t, depth_p = [], 0, 0
    for ch in s:
        if ch == "<":
            depth_t += 1
        elif ch == ">" and depth_t:
            depth_t -= 1
        elif ch == "(" and not depth_t:
            depth_p += 1
        elif ch == ")" and depth_p:
            depth_p -= 1
        elif not depth_t and not depth_p:
            out.append(ch)
    name = "".join(out).strip()
    return name.split()[-1] if name else ""


def identifier(kernel: str) -> str:
    """The last component of the base name: ``ns::k`` -> ``k``."""
    return base_name(kernel).rsplit("::", 1)[-1]


def source_kernels(source: str) -> set[str]:
    """Kernel names a candidate's Python source declares: ``__global__`` functions anywhere in it
    (its CUDA strings), ``@triton.jit``-decorated functions, cupy raw-kernel names."""
    names = {m.group(1) for m in _GLOBAL.finditer(_BOUNDS.sub(" ", source))}
    names |= {a or b for a, b in _RAW.findall(source)}
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                text = ast.unparse(target)
                if text.split(".")[-1] in ("jit", "autotune", "heuristics") and "triton" in text or text == "jit":
                    names.add(node.name)
                    break
    return {n for n in names if n and not GENERATED.match(n)}


def _site_packages() -> str:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return ""
    return str(Path(list(spec.submodule_search_locations)[0]).parent)


def library_files() -> list[str]:
    """torch's CUDA libraries and NVIDIA's math libraries on this machine (real files, once each)."""
    site = _site_packages()
    cuda = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    seen, files = set(), []
    for pat in _LIB_GLOBS:
        for p in sorted(glob.glob(pat.format(torch=os.path.join(site, "torch"), site=site, cuda=cuda))):
            real = os.path.realpath(p)
            if real not in seen and os.path.isfile(real):
                seen.add(real)
                files.append(real)
    return files


def _tools() -> tuple[str | None, str | None]:
    cuda = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    cuobjdump = shutil.which("cuobjdump") or (os.path.join(cuda, "bin", "cuobjdump")
                                               if os.path.exists(os.path.join(cuda, "bin", "cuobjdump")) else None)
    return cuobjdump, shutil.which("c++filt")


def parse_symbols(text: str) -> list[str]:
    """Kernel entry symbols (mangled) from ``cuobjdump -symbols`` output."""
    return [line.split()[-1] for line in text.splitlines() if "STT_FUNC" in line and "STO_ENTRY" in line]


_mod_cache: dict[tuple[str, int, int], list[str]] = {}


def module_symbols(path: str, cuobjdump: str, timeout: float = SYMBOLS_TIMEOUT_S) -> list[str]:
    """Kernel symbols of one module, remembered by its path, size and time."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _mod_cache:
        _mod_cache[key] = _list_symbols(path, cuobjdump, timeout)
    return _mod_cache[key]


def _list_symbols(path: str, cuobjdump: str, timeout: float) -> list[str]:
    try:
        p = subprocess.run([cuobjdump, "-symbols", path], capture_output=True, text=True, timeout=timeout,
                           errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return []
    return parse_symbols(p.stdout) if p.returncode == 0 else []


def demangle(names: Iterable[str], cxxfilt: str | None) -> list[str]:
    """binutils c++filt's spelling (the profiler's); names as they are where it is missing."""
    names = list(names)
    if not names or cxxfilt is None:
        return names
    try:
        p = subprocess.run([cxxfilt], input="\n".join(names), capture_output=True, text=True, timeout=120)
        out = p.stdout.splitlines()
        return out if p.returncode == 0 and len(out) == len(names) else names
    except (OSError, subprocess.TimeoutExpired):
        return names


def _squeeze(name: str) -> str:
    return "".join(name.split())


@dataclass
class LibraryKernels:
    names: frozenset[str] = frozenset()
    available: bool = False  # False: no cuobjdump (or no library found): attribution by launch site only
    files: int = 0
    why: str = ""
    squeezed: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.squeezed = frozenset(map(_squeeze, self.names))

    def __contains__(self, kernel: str) -> bool:
        """A library ships this kernel (the profiler's spelling; spaces ignored)."""
        return kernel in self.names or _squeeze(kernel) in self.squeezed


_lib_lock = threading.Lock()
_lib_cache: dict[str, LibraryKernels] = {}


def library_kernels(cache_dir: str | os.PathLike[str] | None = None) -> LibraryKernels:
    """Every kernel the libraries ship, demangled; listed once per process and cached on disk
    (``cache_dir``, the build cache's trusted tier) by the files' paths, sizes and times."""
    files = library_files()
    stamp = hashlib.sha256(json.dumps([(f, os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files]).encode()
                           ).hexdigest()[:24]
    with _lib_lock:
        if stamp in _lib_cache:
            return _lib_cache[stamp]
        got = _load_or_list(files, stamp, cache_dir)
        _lib_cache[stamp] = got
        return got


def _load_or_list(files: list[str], stamp: str, cache_dir: str | os.PathLike[str] | None) -> LibraryKernels:
    path = Path(cache_dir) / f"library-kernels-{stamp}.json" if cache_dir else None
    if path is not None and path.exists():
        try:
            data = json.loads(path.read_text())
            return LibraryKernels(frozenset(data["names"]), True, len(files))
        except (OSError, ValueError, KeyError):
            pass
    cuobjdump, cxxfilt = _tools()
    if cuobjdump is None or not files:
        return LibraryKernels(why="no cuobjdump on this machine" if cuobjdump is None else "no CUDA library found")
    with ThreadPoolExecutor(max_workers=min(8, len(files))) as pool:
        mangled = {s for syms in pool.map(lambda f: module_symbols(f, cuobjdump), files) for s in syms}
    names = frozenset(demangle(sorted(mangled), cxxfilt)) | frozenset(mangled)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps({"files": files, "names": sorted(names)}))
            os.replace(tmp, path)
        except OSError:
            pass
    return LibraryKernels(names, True, len(files))


@dataclass
class CandidateKernels:
    names: frozenset[str] = frozenset()  # demangled symbols of the candidate's built modules
    identifiers: frozenset[str] = frozenset()  # kernel names its source declares
    modules: list[str] = field(default_factory=list)


def candidate_kernels(source: str, module_dirs: Iterable[str | os.PathLike[str]] = ()) -> CandidateKernels:
    """The candidate's kernels: symbols of every module under ``module_dirs`` (its own build tier)
    and the names its source declares."""
    cuobjdump, cxxfilt = _tools()
    mods = sorted({str(p) for d in module_dirs if d and os.path.isdir(d) for p in Path(d).rglob("*.so")})
    syms: set[str] = set()
    if cuobjdump is not None:
        for m in mods:
            syms.update(module_symbols(m, cuobjdump, timeout=30.0))
    names = frozenset(demangle(sorted(syms), cxxfilt))
    idents = frozenset(source_kernels(source)) | frozenset(i for i in map(identifier, names) if not GENERATED.match(i))
    return CandidateKernels(names, idents, mods)


def classify(kernel: str, cand: CandidateKernels, lib: LibraryKernels) -> str:
    """``candidate`` (counts as the candidate's own), ``library`` (a kernel torch or NVIDIA ships)
    or ``foreign`` (declared by no source of the candidate's: generated at run time by a library)."""
    if kernel in lib:
        return LIBRARY
    if kernel in cand.names or identifier(kernel) in cand.identifiers:
        return CANDIDATE
    return FOREIGN


def attribute(kernels: Iterable[str], cand: CandidateKernels, lib: LibraryKernels) -> dict[str, str]:
    return {k: classify(k, cand, lib) for k in kernels}


if __name__ == "__main__":  # python -m sandbox.rules.kernelnames [SOURCE.py]: what the machine lists
    lib = library_kernels()
    print(f"library kernels: {len(lib.names)} from {lib.files} files (available={lib.available} {lib.why})")
    if len(sys.argv) > 1:
        print(sorted(source_kernels(Path(sys.argv[1]).read_text())))
