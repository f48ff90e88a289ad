"""The size of a task's data, and whether judging it fits this machine (issue 26, item 1).

``data_size`` runs the task file with every tensor made on torch's meta device (nothing is
allocated); ``size_check`` compares what one judgement holds (``DataSize.worker_need``, the
arena) with the judging worker's limits on a CPU or the GPU's memory. ``Task.data_size`` and
``Task.size_check`` (sandbox/intake/task.py) are the entry points; harness/tasksize.py turns a check that
does not fit into the one-line refusal."""

from __future__ import annotations

import threading
import types
from dataclasses import dataclass
from typing import Any, Protocol


class Task(Protocol):
    """What the size checks read of a task (sandbox/intake/task.py's ``Task``, which calls them):
    its extra profiles and its module made at a profile."""

    @property
    def extra_profiles(self) -> list[str]: ...

    def data_size(self, profile: str = "default") -> DataSize | None: ...

    def load_module(self, profile: str = "default") -> types.ModuleType: ...


@dataclass(frozen=True)
class DataSize:
    """One call's data at a profile (``Task.data_size``), in bytes."""

    profile: str
    inputs: int
    outputs: int | None  # None: the forward does not run on the meta device (not counted)
    weights: int  # parameters and buffers of Model(*get_init_inputs())

    def worker_need(self, cuda: bool) -> int:
        """A lower bound of what the judge holds for this call in the reference worker (its
        private memory on a CPU, the device's memory on a GPU): the inputs it made and keeps to
        check the candidate's call against, the call's own input tensors, the output and the
        snapshot taken of it after the call, and the weights (docs/evaluator.md "Task size").
        On a GPU the candidate's worker shares the device: its input tensors, output and
        snapshot, and its own weights are added."""
        out = self.outputs or 0
        need = 2 * self.inputs + 2 * out + self.weights
        if cuda:
            need += self.inputs + 2 * out + self.weights
        return need

    def arena(self) -> int:
        """The shared memory the parent maps for the call (sandbox/worker/arena.py): the reference's
        and the candidate's inputs, and the output region (twice the output, its bound)."""
        return 2 * self.inputs + 2 * (self.outputs or 0)


TORCH_AS = 2**30  # address space torch itself maps in a worker, at least (sandbox/worker/judgeenv.py)


@dataclass(frozen=True)
class SizeCheck:
    """Whether one judgement of a task fits this machine (``size_check``): the binding need
    against its limit, both in bytes, and the limit in words."""

    size: DataSize  # the profile that needs the most
    need: int
    limit: int
    limit_text: str

    @property
    def fits(self) -> bool:
        return self.need <= self.limit


def _judged_profiles(task: Task, config: Any) -> list[str]:
    """The profiles one judgement under ``config`` runs: the base one and, in final mode, its extra shapes."""
    profiles = [config.profile]
    if getattr(config.mode, "value", config.mode) == "final":
        small = config.profile.startswith("small")
        profiles += [p for p in task.extra_profiles if p.startswith("small_extra" if small else "extra")]
    return profiles


def size_check(task: Task, config: Any) -> SizeCheck | None:
    """The task's data at the profiles ``config`` judges (the base profile; its extra shapes in
    final mode) against this machine's limits for a judgement: on a CPU the judging worker's
    memory limit and address-space limit (sandbox/worker/judgeenv.py ``worker_limits``: the arena is
    mapped in the reference worker), on a GPU the device's memory (from nvidia-smi, when it
    answers) and the host RAM behind the arena. The check that binds most is returned; None
    when the size cannot be estimated (the judge then finds out itself)."""
    from sandbox.worker.judgeenv import worker_limits

    cuda = str(config.device).startswith("cuda")
    profiles = _judged_profiles(task, config)
    sizes = [s for s in (task.data_size(p) for p in profiles) if s is not None]
    if not sizes:
        return None
    limits, ram = worker_limits(config)
    checks: list[SizeCheck] = []
    for s in sizes:
        if cuda:
            gpu = gpu_memory_bytes()
            if gpu:
                checks.append(SizeCheck(s, s.worker_need(True), gpu, f"the GPU's memory ({_gib(gpu)})"))
            checks.append(SizeCheck(s, s.arena(), ram, f"this machine's RAM ({_gib(ram)}) for the judge's "
                                    "shared input and output buffers"))
            continue
        if limits.rss_bytes:
            checks.append(SizeCheck(s, s.worker_need(False), limits.rss_bytes,
                                    f"a judging worker's memory limit here ({_gib(limits.rss_bytes)}: "
                                    f"min(8 GiB, 35% of this machine's {_gib(ram)}))"))
        if limits.address_space_bytes:
            checks.append(SizeCheck(s, s.worker_need(False) + s.arena() + TORCH_AS, limits.address_space_bytes,
                                    f"a judging worker's address-space limit here "
                                    f"({_gib(limits.address_space_bytes)}; it maps the judge's shared buffers "
                                    "and torch besides its own memory)"))
    over = [c for c in checks if not c.fits]  # the first that fails, in the order above (memory first)
    return over[0] if over else max(checks, key=lambda c: c.need / max(c.limit, 1), default=None)


def judged_sizes(task: Task, config: Any) -> list[DataSize]:
    """``DataSize`` at each profile a judgement under ``config`` runs; [] where it cannot be
    estimated (best effort: the judge finds out itself)."""
    try:
        return [s for s in (task.data_size(p) for p in _judged_profiles(task, config)) if s is not None]
    except Exception:  # noqa: BLE001 - the estimate is best effort
        return []


def device_arena_fits(task: Task, config: Any, sizes: list[DataSize] | None = None) -> bool:
    """Whether the judge's shared buffers fit in the GPU's memory beside what both workers hold
    there (``worker_need(True) + arena()`` at the profiles ``config`` judges; ``sizes``: those
    already estimated by ``judged_sizes``): the device arena (sandbox/worker/devarena.py) is used
    only then; otherwise the host arena, as before, so a task that fits with its buffers in host
    RAM is never refused or failed for them. True when the size or the GPU's memory is unknown
    (the device arena falls back by itself if it cannot be made)."""
    if not str(config.device).startswith("cuda"):
        return False
    gpu = gpu_memory_bytes()
    if not gpu:
        return True
    sizes = judged_sizes(task, config) if sizes is None else sizes
    return all(s.worker_need(True) + s.arena() <= gpu for s in sizes)


CONTEXT_BYTES = 2**30  # two workers' CUDA contexts and caching-allocator slack, at least


def judgement_gpu_bytes(task: Task, config: Any, sizes: list[DataSize] | None = None) -> int | None:
    """The GPU memory one judgement under ``config`` holds at its peak: both workers' data
    (``worker_need(True)``), the device arena when it is used, and their contexts; the profile
    that needs the most. None off a GPU or when the size cannot be estimated. Weighs the
    judgement's machine-wide slots (sandbox/lane/slots.py): judgements in flight on one GPU fit it."""
    if not str(config.device).startswith("cuda"):
        return None
    sizes = judged_sizes(task, config) if sizes is None else sizes
    if not sizes:
        return None
    dev = device_arena_fits(task, config, sizes)
    return max(s.worker_need(True) + (s.arena() if dev else 0) for s in sizes) + CONTEXT_BYTES


def check_gpu_bytes(task: Task, config: Any, draws: int) -> int | None:
    """The GPU memory the task check holds at its peak (sandbox/intake/taskcheck.py) at
    ``config.profile``: one reference worker, no arena, with one draw's inputs and the next draw's
    while they are made, the draw's output, the first draw's kept output and one more output's worth
    for the forward's own tensors, the ``draws`` models (built before the device is held), and a
    context. A
    judgement's estimate (``judgement_gpu_bytes``: two workers, the arena) where the output's size
    is not known (its forward does not run on the meta device); None off a GPU or unknown."""
    if not str(config.device).startswith("cuda"):
        return None
    s = data_size(task, config.profile)
    if s is None or s.outputs is None:
        return judgement_gpu_bytes(task, config)
    return 2 * s.inputs + 3 * s.outputs + draws * s.weights + CONTEXT_BYTES


def gpu_memory_bytes() -> int | None:
    """The GPU's memory: ``KH_GPU_MEMORY_MIB`` (a MIG slice, a test) or nvidia-smi's first GPU."""
    import os

    from sandbox.machine import nvidia_smi

    env = os.environ.get("KH_GPU_MEMORY_MIB", "").strip()
    if env:
        return mib_bytes(env)
    return mib_bytes(nvidia_smi("memory.total"))


def mib_bytes(text: str | None) -> int | None:
    """Bytes of an nvidia-smi memory value ("81559 MiB"), or None."""
    try:
        return int(float(str(text).split()[0]) * 2**20) if text else None
    except (ValueError, IndexError):
        return None


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


_SIZES: dict[tuple[str, str, str], DataSize | None] = {}  # (source, profile, its shapes) -> data_size's answer
_SIZES_LOCK = threading.Lock()


def data_size(task: Task, profile: str = "default") -> DataSize | None:
    """``Task.data_size``: the file run with every tensor made on the meta device. Remembered per
    source, profile and shapes in this process: a batch asked it of every task in its size check, in
    its task check's memory reservations and in each judgement (50-100 ms a KernelBench task)."""
    source = getattr(task, "source", None)
    if not isinstance(source, str) or not source:
        return _data_size(task, profile)
    k = (source, profile, repr(sorted((getattr(task, "shapes", {}) or {}).get(profile, {}).items())))
    with _SIZES_LOCK:
        if k in _SIZES:
            return _SIZES[k]
    size = _data_size(task, profile)
    with _SIZES_LOCK:
        _SIZES[k] = size
    return size


def _data_size(task: Task, profile: str) -> DataSize | None:
    try:
        import torch
        from torch.overrides import TorchFunctionMode
    except Exception:  # noqa: BLE001 - no torch: nothing to estimate with
        return None

    class OnMeta(TorchFunctionMode):
        """``device=`` arguments, ``.cuda()``, ``.cpu()`` and ``.to(device)`` stay on meta."""

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = "meta"
            name = getattr(func, "__name__", "")
            if args and isinstance(args[0], torch.Tensor):
                if name in ("cuda", "cpu"):
                    return args[0]
                if name == "to":
                    rest = [a for a in args[1:] if not isinstance(a, (torch.device, str))]
                    kwargs.pop("device", None)
                    return func(args[0], *rest, **kwargs) if rest or kwargs else args[0]
            return func(*args, **kwargs)

    def nbytes(xs: Any) -> int:
        if isinstance(xs, torch.Tensor):
            return xs.numel() * xs.element_size()
        if isinstance(xs, (list, tuple)):
            return sum(nbytes(x) for x in xs)
        if isinstance(xs, dict):
            return sum(nbytes(x) for x in xs.values())
        return 0

    try:
        mod = task.load_module(profile)
        with torch.device("meta"), OnMeta(), torch.no_grad():
            torch.manual_seed(0)
            model = mod.Model(*mod.get_init_inputs())
            inputs = list(mod.get_inputs())
            weights = sum(nbytes(t) for t in (*model.parameters(), *model.buffers()))
            size = nbytes(inputs)
            try:
                outputs: int | None = nbytes(model(*inputs))
            except Exception:  # noqa: BLE001 - an op without a meta kernel: outputs not counted
                outputs = None
    except Exception:  # noqa: BLE001 - inputs that cannot be made on meta: no estimate
        return None
    return DataSize(profile=profile, inputs=size, outputs=outputs, weights=weights)
