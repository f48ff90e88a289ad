"""Worker warm-up in two parts. ``warm`` runs once in both roles before the worker says hello
(before any candidate code exists and before the judgement takes the device): allocator and
precision settings, torch's thread pools, the CUDA context, the L2-flush buffer and the
profiler, with no GPU kernel. ``warm_device`` runs the warm-up's kernels once the judgement
holds the device (the parent's ``warm_device`` request)."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from typing import Any


def warm(t: Any, device: Any, cuda: bool) -> tuple[Any, Any]:
    """Return (the L2-flush buffer, the timing-stream marker); both None on a CPU. Runs no GPU
    kernel: the workers of the next judgement start while the current one holds the device
    (sandbox/lane/devicelock.py), and a kernel from another process's context would time-slice the
    GPU under its timed calls. The kernels of the warm-up run in ``warm_device``, inside the lock."""
    flush_buf = marker = None
    _keep_freed_blocks_in_heap()
    # fp32 means fp32: cuDNN convolutions default to TF32 on Ampere and later, which puts the
    # reference (and the eager and compile baselines) ~1e-3 off, so an exact fp32 kernel would
    # fail atol=rtol=1e-4 and a TF32 downcast (cheat 15) would pass. Both roles, same settings.
    t.backends.cuda.matmul.allow_tf32 = False
    t.backends.cudnn.allow_tf32 = False
    if not cuda:
        t.set_num_threads(1)  # see workerenv.scrubbed_env: stable, comparable CPU numbers
    a = t.randn(64, 64)
    (a @ a).sum().item()
    t.ones(1 << 16).add_(1).sum().item()
    if cuda:
        t.cuda.init()  # the context: allocations, no kernel
        t.cuda.set_device(t.device(device).index or 0)  # 'cuda' has no index
        l2 = getattr(t.cuda.get_device_properties(device), "L2_cache_size", 50 * 2**20)
        flush_buf = t.empty(max(2 * l2, 2**24) // 4, dtype=t.float32, device=device)
        marker = t.empty(1, device=device)
    _warm_profiler(t, cuda)
    return flush_buf, marker


def warm_device(t: Any, device: Any, flush_buf: Any, part: str = "all") -> float:
    """The warm-up's GPU kernels, once the judgement holds the device: cuBLAS, elementwise,
    the flush (``part`` "kernels"), and the spin rate of the timing lead ("spin"); "all" is both.
    A judgement runs its two workers' kernels side by side and their spins one after the other
    (two spins at once would time-slice each other). Returns the spin's clock cycles per us (0
    for "kernels")."""
    if part in ("all", "kernels"):
        b = t.randn(256, 256, device=device)
        (b @ b).sum().item()
        t.ones(1 << 16, device=device).add_(1).sum().item()
        if flush_buf is not None:
            flush_buf.zero_()
    rate = _spin_rate(t) if part in ("all", "spin") else 0.0
    t.cuda.synchronize()
    return rate


def _spin_rate(t: Any) -> float:
    """Clock cycles per microsecond of ``torch.cuda._sleep`` on this GPU (a wrapper of
    ``torch._C._cuda_sleep``, the spin the timing lead of sandbox/timing/measure.py runs for a number
    of microseconds). Best of three 1e6-cycle spins, timed by events."""
    best = float("inf")
    t.cuda._sleep(1000)
    for _ in range(3):
        s, e = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        s.record()
        t.cuda._sleep(1_000_000)
        e.record()
        e.synchronize()
        best = min(best, s.elapsed_time(e) * 1e3)  # us
    return 1e6 / best if best > 0 else 1000.0


def _warm_profiler(t: Any, cuda: bool) -> None:
    """The first profiler session of a process pays its setup (Kineto, and CUPTI on a GPU),
    measured at 6.5 s on the H100 under build load inside the profiled call. Paid here instead,
    before the judgement holds the device; both roles do it so they carry the same profiler
    state into their timed calls. The session records a host op only (no kernel outside the
    device lock, see ``warm``); CUPTI is set up when the session starts."""
    from torch.profiler import ProfilerActivity

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile_class()(activities=acts):
        t.ones(8).add_(1)


@functools.cache
def profile_class() -> Any:
    """``torch.profiler.profile`` whose sessions start without importing Inductor. Stock
    ``prepare_trace`` asks ``hasattr(torch, "_inductor")`` to read one Inductor setting (CUDA
    graphs, off by default), and torch's lazy-module ``__getattr__`` answers by importing
    Inductor and Dynamo: 3.8 of a worker's 8.8 s of start-up on the 2-core box (cProfile of
    ``Worker.__init__``, session 21), paid by every worker, the build worker's included. While a
    session of this class starts, the question gets the answer a process that never imported
    Inductor would have wanted (False: the default setting); a process that imported it (a
    candidate that uses ``torch.compile``, the reference's compile baseline) reads the setting as
    before. Importing Inductor later leaves nothing the hooks check sees (tests/evaluator/test_worker_start.py)."""
    from torch.profiler import profile

    class Profile(profile):  # type: ignore[misc, valid-type]
        def prepare_trace(self) -> None:
            with _inductor_unasked():
                super().prepare_trace()

    return Profile


@contextlib.contextmanager
def _inductor_unasked() -> Iterator[None]:
    import torch

    if "torch._inductor" in sys.modules:
        yield
        return
    lazy = torch.__dict__.get("__getattr__")

    def getattr_(name: str) -> Any:
        if name == "_inductor":
            raise AttributeError(name)
        if lazy is None:
            raise AttributeError(name)
        return lazy(name)

    torch.__getattr__ = getattr_  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if lazy is None:
            del torch.__getattr__
        else:
            torch.__getattr__ = lazy  # type: ignore[attr-defined]


def _keep_freed_blocks_in_heap() -> None:
    """glibc: serve blocks up to 32 MiB from the heap and never trim it, so a freed (poisoned)
    block is what the next same-size allocation gets: the CPU analogue of the CUDA caching
    allocator that the NaN poisoning relies on. Both roles do it, so timings stay comparable."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 32 * 2**20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 2**30)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass
