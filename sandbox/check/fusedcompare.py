"""The tolerance rule's all-finite pass in one kernel (fusedcompare.cu), for outputs on a GPU.

``compare._float_stats`` runs the rule in float64 a chunk at a time with torch operations: about
20 kernels a chunk, each reading and writing float64 buffers, 22 ms per GiB of float32 output on
an H200 (session 26). A KernelBench transposed convolution's 2-3.5 GB output was checked 11 times
a judgement: 0.5-1.0 s of its GPU hold (session 27). The kernel here reads each output once, in
its own dtype, and does the same float64 operations per element (round-to-nearest intrinsics: no
contracted multiply-add), so its statistics are the torch pass's, bit for bit; each block writes
partial maxima, counts and the first bad index, which torch reduces (exact in any order). Where an
element of either output is not finite it reports that, and the caller runs the masked torch pass.

The parent builds the library once per machine with nvcc into the trusted cache (``ensure``, like
sandbox/rules/opcount.py: no worker writes there), copies it into each reference worker's scratch
(``place``: the reference worker does not see the cache; session 27's first GPU run found every
load failing with FileNotFoundError there) and passes that path and the hash with each ``check``
request; only the reference worker (trusted) loads it (``Lib``). Without nvcc, or where the build
or the load fails, the torch pass runs and the verdict says why (``evidence.compare_fused``).
``KH_FUSED_COMPARE``: ``off``, or ``cpu-too`` (built and loaded for CPU judgements as well, where it
compares nothing: how a CPU test checks that the reference worker can load it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

from sandbox.build.compileonce import compile_once, file_sha256

_SOURCE = Path(__file__).with_name("fusedcompare.cu").read_text()
NAME = "kh_fusedcompare_v1"
MIN_ELEMENTS = 1 << 22  # below this (16 MB of float32) the torch pass costs a few ms at most
DTYPES = {"torch.float32": 0, "torch.float64": 1, "torch.float16": 2, "torch.bfloat16": 3}
MAX_BLOCKS = 2048
ARCH_FALLBACK = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
                 "-gencode", "arch=compute_90,code=compute_90"]


def _nvcc() -> str | None:
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
            return os.path.join(home, "bin", "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    return "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None


def _gpu_models() -> list[str]:
    """The driver's model line of each GPU (``/proc/driver/nvidia/gpus/*/information``, read without
    a CUDA context), so that a cache shared by machines with other GPUs never loads a build for
    another architecture; [] where the driver has no such files."""
    out = []
    for info in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information")):
        try:
            out += [ln.strip() for ln in info.read_text().splitlines() if ln.startswith("Model:")]
        except OSError:
            pass
    return sorted(set(out))


def _build(cache_root: str, nvcc: str) -> str:
    """Compile into ``cache_root/<NAME>-<key>/`` (atomically: a finished file or none); a second
    call finds it. ``-arch=native`` (nvcc 13 falls back to its default arch, with a warning, where
    it sees no GPU), else sm_80 and sm_90 with PTX. A build for another architecture than the
    GPU's does not launch there, and the torch pass runs."""
    ver = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    last = ""
    for arch in (["-arch=native", *_gpu_models()], ARCH_FALLBACK):  # native: keyed by the GPUs it saw
        key = hashlib.sha256("\0".join([_SOURCE, ver, *arch]).encode()).hexdigest()[:32]
        arch = arch[:1] if arch[0] == "-arch=native" else arch

        def argv(src: Path, out: Path, arch: list[str] = arch) -> list[str]:
            return [nvcc, "-O3", "-shared", "-Xcompiler", "-fPIC", "-fmad=false", *arch, str(src), "-o", str(out)]

        so, last = compile_once(Path(cache_root) / f"{NAME}-{key}", NAME, _SOURCE, ".cu", argv)
        if so is not None:
            return so
    raise RuntimeError(f"building the fused compare failed: {last}")


_READY: dict[str, tuple[str | None, str | None]] = {}  # cache root -> (built .so, why not), this process
_GUARD = threading.Lock()


def wanted(device: str) -> bool:
    """Whether a judgement on ``device`` gets the library (``KH_FUSED_COMPARE``, above)."""
    mode = os.environ.get("KH_FUSED_COMPARE", "auto")
    return mode != "off" and (device.startswith("cuda") or mode == "cpu-too")


def place(path: str, scratch: str) -> str:
    """A copy of the built library in a reference worker's ``scratch``; its path."""
    dst = os.path.join(scratch, f"{NAME}.so")
    shutil.copyfile(path, dst)
    return dst


def ensure(cache_root: str) -> tuple[str | None, str | None]:
    """(path of the built library, None) or (None, why not), built once per cache root before
    any judgement's clock starts."""
    with _GUARD:
        if cache_root not in _READY:
            nvcc = _nvcc()
            if nvcc is None:
                _READY[cache_root] = (None, "no nvcc (CUDA_HOME, PATH, /usr/local/cuda)")
            else:
                try:
                    _READY[cache_root] = (_build(cache_root, nvcc), None)
                except (OSError, subprocess.SubprocessError, RuntimeError) as e:
                    _READY[cache_root] = (None, f"{type(e).__name__}: {e}"[:300])
        return _READY[cache_root]


class Lib:
    """The loaded library (reference worker). ``stats`` gives the all-finite pass's numbers, or
    None where the torch pass must run (a dtype it does not take, a small or non-contiguous
    tensor, a value that is not finite)."""

    def __init__(self, path: str, sha256: str | None = None) -> None:
        import ctypes

        if sha256 is not None and file_sha256(path) != sha256:
            raise RuntimeError(f"{path} does not have the hash the parent built it with")
        fn = ctypes.CDLL(path).kh_cmp
        fn.restype = ctypes.c_int
        ll, dbl, vp = ctypes.c_longlong, ctypes.c_double, ctypes.c_void_p
        fn.argtypes = [ctypes.c_int, vp, vp, ctypes.c_int, ll, dbl, dbl, vp, vp, vp, ctypes.c_int, vp]
        self._fn = fn
        self.error: str | None = None

    def stats(self, of: Any, rf: Any, atol: float, rtol: float) -> tuple[list[float], int, int] | None:
        """([max |o-r|, max tightest, max rel], bad count, first bad index or -1) over two flat
        CUDA tensors of one dtype, or None (the torch pass runs)."""
        import torch

        code = DTYPES.get(str(of.dtype))
        n = of.numel()
        if (self.error is not None or code is None or n < MIN_ELEMENTS or rf.dtype != of.dtype or rf.numel() != n or not of.is_cuda
                or rf.device != of.device or not (of.is_contiguous() and rf.is_contiguous())):
            return None
        blocks = int(min(MAX_BLOCKS, (n + 255) // 256))
        dev = of.device
        pmax = torch.empty(3 * blocks, dtype=torch.float64, device=dev)
        pcnt = torch.empty(2 * blocks, dtype=torch.int64, device=dev)
        pfirst = torch.empty(blocks, dtype=torch.int64, device=dev)
        stream = torch.cuda.current_stream(dev).cuda_stream
        err = self._fn(dev.index if dev.index is not None else torch.cuda.current_device(), of.data_ptr(),
                       rf.data_ptr(), code, n, float(atol), float(rtol), pmax.data_ptr(), pcnt.data_ptr(),
                       pfirst.data_ptr(), blocks, stream)
        if err != 0:  # never a check's failure: the torch pass runs, now and for the worker's later checks
            self.error = f"the fused compare kernel did not launch (cudaError {err}); the torch pass ran"
            return None
        mx = pmax.view(blocks, 3).amax(dim=0)
        cnt = pcnt.view(blocks, 2).sum(dim=0)
        first = pfirst.amin()
        (m0, m1, m2), (bad, nonfin), first_i = mx.tolist(), cnt.tolist(), int(first)
        if nonfin:
            return None
        return [m0, m1, m2], int(bad), (first_i if bad else -1)
