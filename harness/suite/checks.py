"""Self-checks of reference ops: run the reference, compare like the evaluator, and prove that
trivial outputs (zeros, a constant, the first input echoed) fail the op's tolerance.

Used by the suite tests and by ``harness suite check``. Everything here runs on any device,
CPU included; nothing here judges candidates (that is ``sandbox/``).

``lint`` is ``harness suite lint``: the task check ``task.degenerate`` (sandbox/intake/taskcheck.py) over
a list of tasks, exactly as ``harness eval``, ``eval-batch`` and ``run`` run it before judging (in a
reference worker, at the profile a judgement on that device uses, kept per task source).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from sandbox.contract import Task


@dataclass(frozen=True)
class RefRun:
    """One reference forward: the inputs it got and what it returned (as a flat tuple)."""

    inputs: list[Any]
    outputs: tuple[torch.Tensor, ...]


def build(task: Task, profile: str, seed: int, device: str | torch.device = "cpu"):
    """(model, inputs) for ``task`` at ``profile``: seeded, inputs created directly on ``device``.

    Mirrors the evaluator (sandbox/worker/main.py): the model is built on the CPU from a seed, moved to
    ``device`` and put in eval mode; inputs come from ``get_inputs()`` under ``torch.device``.
    """
    mod = task.load_module(profile)
    torch.manual_seed(seed)
    model = mod.Model(*mod.get_init_inputs()).to(device).eval()
    torch.manual_seed(seed + 1)
    with torch.device(device):
        inputs = list(mod.get_inputs())
    return model, inputs


def flat_outputs(out: Any) -> tuple[torch.Tensor, ...]:
    if isinstance(out, torch.Tensor):
        return (out,)
    if isinstance(out, (tuple, list)):
        return tuple(t for o in out for t in flat_outputs(o))
    raise TypeError(f"reference returned {type(out).__name__}, expected tensor(s)")


def run_reference(task: Task, profile: str = "small", seed: int = 0, device: str = "cpu") -> RefRun:
    model, inputs = build(task, profile, seed, device)
    with torch.no_grad():
        out = model(*inputs)
    return RefRun(inputs=inputs, outputs=flat_outputs(out))


def within_tolerance(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> bool:
    """The evaluator's rule: every element satisfies |out - ref| <= atol + rtol*|ref|, and out is
    finite wherever ref is finite (NaN/inf only where the reference has them, and equal)."""
    if out.shape != ref.shape:
        return False
    o, r = out.detach().to(torch.float64), ref.detach().to(torch.float64)
    fin = torch.isfinite(r)
    if not bool(torch.isfinite(o[fin]).all()):
        return False
    if not bool((o[~fin].isnan() == r[~fin].isnan()).all()):
        return False
    if not bool(((o[~fin] == r[~fin]) | r[~fin].isnan()).all()):
        return False
    return bool(((o[fin] - r[fin]).abs() <= atol + rtol * r[fin].abs()).all())


def trivial_fakes(run: RefRun, other: RefRun) -> dict[str, Sequence[torch.Tensor]]:
    """Cheap outputs a reward hacker might return; each must fail the tolerance.

    ``other`` is the reference at a different seed: its mean is a constant that does not depend
    on the inputs being judged (for scalar outputs the only meaningful constant).
    """
    fakes: dict[str, Sequence[torch.Tensor]] = {
        "zeros": [torch.zeros_like(r) for r in run.outputs],
        "ones": [torch.ones_like(r) for r in run.outputs],
        "other-seed mean": [
            torch.full_like(r, float(o.double().mean()))
            for r, o in zip(run.outputs, other.outputs, strict=True)
        ],
        "other-seed output": list(other.outputs),
    }
    if all(r.numel() > 1 for r in run.outputs):
        fakes["own mean"] = [torch.full_like(r, float(r.double().mean())) for r in run.outputs]
    first = next((i for i in run.inputs if isinstance(i, torch.Tensor)), None)
    if first is not None and len(run.outputs) == 1 and first.shape == run.outputs[0].shape:
        fakes["first input echoed"] = [first.to(run.outputs[0].dtype)]
    return fakes


def discriminative_failures(
    task: Task, profile: str = "small", seed: int = 0, device: str = "cpu"
) -> list[str]:
    """Names of trivial outputs that PASS the op's tolerance (empty list = the op discriminates)."""
    run = run_reference(task, profile, seed, device)
    other = run_reference(task, profile, seed + 1000, device)
    bad = []
    for name, fake in trivial_fakes(run, other).items():
        if all(
            within_tolerance(f, r, task.meta.atol, task.meta.rtol)
            for f, r in zip(fake, run.outputs, strict=True)
        ):
            bad.append(name)
    return bad


class _AllocCounter(TorchDispatchMode):
    """Sums the bytes of every tensor an aten op produces (an upper bound on intermediates)."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self.bytes += t.numel() * t.element_size()
        return out


def working_set_bytes(task: Task, profile: str = "default") -> dict[str, int]:
    """Estimated memory of one forward at ``profile`` without allocating (meta tensors):
    parameters, inputs, and the sum of every tensor produced during input creation and forward
    (outputs and intermediates; an upper bound since freed temporaries are counted too)."""
    mod = task.load_module(profile)
    with torch.device("meta"):
        model = mod.Model(*mod.get_init_inputs())
        counter = _AllocCounter()
        with counter:
            inputs = list(mod.get_inputs())
        in_bytes = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
        counter.bytes = 0
        with torch.no_grad(), counter:
            out = model(*inputs)
    params = sum(p.numel() * p.element_size() for p in [*model.parameters(), *model.buffers()])
    out_bytes = sum(t.numel() * t.element_size() for t in flat_outputs(out))
    return {
        "params": params,
        "inputs": in_bytes,
        "outputs": out_bytes,
        "produced": counter.bytes,
        "total": params + in_bytes + counter.bytes,
    }


def lint(tasks: Sequence[Task], device: str = "cpu", profile: str | None = None, sandbox: str = "process",
         build_dir: str | None = None) -> list[Any]:
    """The task check's answer (``sandbox.contract.TaskCheck``) for each task, at ``profile`` where
    the task has it, else at the profile a judgement on ``device`` uses."""
    from harness.policy import eval_config
    from sandbox.contract import check_tasks

    items = []
    for t in tasks:
        prof = profile if profile in t.profiles else None
        items.append((t, eval_config("feedback", device, task=t, sandbox=sandbox, profile=prof, build_dir=build_dir)))
    return check_tasks(items)
