"""The reference worker's compile caches, kept across judgements of the same op (issue 16).

The ``compile`` baseline is ``torch.compile`` of the task's ``Model``: every judgement in final
mode compiled it again in a fresh reference worker (inductor's and Triton's caches lived in the
worker's private scratch), under the device lock. Here the parent keeps them per task in
``<cache root>/reference/<key>/``: it copies the entry into the new reference worker's private
cache dir before the worker starts (``seed``) and copies back what the worker added when it is
closed (``harvest``). The reference worker never mounts the persistent dir, so its uid (an outer
uid per scratch when the parent is root) never has to own it, and no candidate's jail can
write it (the cache root is read-only there; a reference worker's scratch is in the host's
``/tmp``, which no jail sees). Only trusted code (the task's ``Model`` and torch) writes into
a reference worker's cache.

Copies go file by file through a temporary name and ``os.replace``; Triton's group files
(``__grp__*``), which name the files of an entry, are copied last, so a reader never sees a
group whose files are missing (Triton compiles again when one is). A harvest is capped
(``MAX_HARVEST_BYTES``): a bigger one is skipped, never half done on purpose.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

MAX_HARVEST_BYTES = 256 * 2**20
INDUCTOR = "inductor"  # TORCHINDUCTOR_CACHE_DIR under the worker's cache root


def entry_dir(root: str | os.PathLike[str], task_source: str, device: str) -> str:
    """The persistent entry for one task on one device kind (cpu / cuda)."""
    kind = "cuda" if device.startswith("cuda") else "cpu"
    key = hashlib.sha256(f"{kind}\0{task_source}".encode()).hexdigest()[:24]
    return str(Path(root) / "reference" / key)


def _files(top: str) -> list[str]:
    out: list[str] = []
    for d, _, names in os.walk(top):
        for n in names:
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p) and ".kh-tmp-" not in n:
                out.append(os.path.relpath(p, top))
    return sorted(out, key=lambda r: (os.path.basename(r).startswith("__grp__"), r))


def _copy(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    tmp = f"{dst}.kh-tmp-{secrets.token_hex(4)}"
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def seed(persist: str, cache: str) -> int:
    """Copy the persistent entry into a new worker's cache dir; the number of files copied."""
    if not os.path.isdir(persist):
        return 0
    n = 0
    for rel in _files(persist):
        _copy(os.path.join(persist, rel), os.path.join(cache, rel))
        n += 1
    return n


def harvest(cache: str, persist: str) -> int:
    """Copy the files the worker added to its cache dir back into the persistent entry; the
    number copied (0 when there were none, or more than ``MAX_HARVEST_BYTES`` of them)."""
    if not os.path.isdir(cache):
        return 0
    new = [r for r in _files(cache) if not os.path.exists(os.path.join(persist, r))]
    try:
        size = sum(os.path.getsize(os.path.join(cache, r)) for r in new)
    except OSError:
        return 0
    if not new or size > MAX_HARVEST_BYTES:
        return 0
    for rel in new:
        _copy(os.path.join(cache, rel), os.path.join(persist, rel))
    return len(new)


# torch.compile's first call on an inductor cache hit imported these (torch 2.13 CPU, listed by
# sys.modules before and after; the H100's torch 2.11 spent 0.4 s in such imports)
_LAZY_MODULES = (
    "torch._dynamo.backends.inductor", "torch._dynamo.backends.cudagraphs", "torch._dynamo.backends.distributed",
    "torch._dynamo.dce_extra_outputs", "torch._export.passes.add_runtime_assertions_for_constraints_pass",
    "torch._export.passes.collect_tracepoints_pass", "torch._export.passes._node_metadata_hook",
    "torch._functorch._aot_autograd.subclass_codegen", "torch._higher_order_ops.passes.inline_invoke_subgraph",
    "torch._inductor.codegen.cpp_wrapper_cpu_array_ref", "torch._inductor.codegen.cpp_wrapper_gpu",
    "torch._inductor.codegen.cuda_combined_scheduling", "torch._inductor.codegen.memory_planning",
    "torch._inductor.codegen.wrapper_fxir", "torch._inductor.hooks", "torch._subclasses.schema_check_mode",
    "torch.distributed.tensor.experimental", "torch.export._trace", "torch.export._unlift",
    "torch.fx.experimental.validator", "torch.utils._cpp_embed_headers", "torch._dynamo.backends.onnxrt",
    "torch._dynamo.backends.tensorrt", "torch._dynamo.backends.torchxla", "torch._dynamo.backends.tvm",
    "torch._inductor.codegen.cpp_wrapper_mps", "torch._inductor.codegen.halide", "torch._inductor.codegen.mps",
    "torch._inductor.codegen.pallas", "torch._inductor.codegen.python_wrapper_mtia",
    "torch._inductor.codegen.xpu.xpu_combined_scheduling",
)


def preload(device: str) -> dict[str, float]:
    """In the reference worker, before its hello (no device held yet): torch.compile's work that
    needs no GPU and is the same for every model, so the compile baseline's first call (which
    runs with the device held) has only its own graph to trace and load. Returns seconds per
    step; a step that fails is left to that first call, which reports any real error."""
    import time

    spent: dict[str, float] = {}

    def step(name: str, fn: Any) -> None:
        t = time.monotonic()
        try:
            fn()
        except Exception:  # noqa: BLE001
            pass
        spent[name] = round(time.monotonic() - t, 3)

    def imports() -> None:
        import torch._dynamo  # noqa: F401
        import torch._inductor.compile_fx  # noqa: F401

    def torch_key() -> None:  # hashes over torch's and Triton's own sources, read from disk: the cache keys need them
        from torch._inductor import codecache

        codecache.torch_key()
        if device.startswith("cuda"):  # 0.47 s of the first call on the H100 (a one-time probe, scripts/gpu_compile_first.py, in git history)
            from triton.runtime.cache import triton_key

            triton_key()

    def lazy() -> None:  # what a first call imported on a cache hit, every backend registered (0.4 s, H100)
        import importlib

        for name in _LAZY_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - another torch version: that first call imports its own
                pass

    def backend() -> None:
        if device.startswith("cuda"):  # the Triton side of inductor, without a CUDA call
            import torch._inductor.codegen.triton  # noqa: F401
            import torch._inductor.runtime.triton_heuristics  # noqa: F401
            import triton  # noqa: F401
        else:  # the C++ side: it compiles a probe to pick the vector ISA
            from torch._inductor import cpu_vec_isa

            cpu_vec_isa.pick_vec_isa()

    def modules() -> None:  # dynamo's source lookups walk every loaded module's file once per process
        import inspect

        inspect.getmodule(None, _filename=os.devnull)

    for name, fn in (("imports", imports), ("torch_key", torch_key), ("backend", backend), ("lazy", lazy),
                     ("modules", modules)):
        step(name, fn)
    return spent
