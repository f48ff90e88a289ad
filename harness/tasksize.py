"""A task's size before judging (issue 26, item 1): ``--set NAME=VALUE`` (the task file's
module-level globals overridden, e.g. a KernelBench file's ``batch_size``) and the refusal of a
task too big for this machine, in one line and within seconds, before any worker starts.

    sets = parse_sets(("batch_size=16", "dim=16384"))        # UserError on a malformed item
    tasks = apply_sets(tasks, sets)                            # UserError on an unknown NAME
    refuse_oversize([(task, config), ...])                     # UserError when one does not fit
    record_globals(verdict, task)                              # evidence["task_globals"] in the verdict

The size comes from ``Task.data_size`` (the file's inputs made on torch's meta device: nothing
allocated) and the limits from ``Task.size_check`` (the judging worker's memory limit on a CPU,
the GPU's memory on a GPU): docs/evaluator.md "Task size". A leaf of ``harness/``: it imports
only the evaluator's contract (where used) and ``harness.usererror``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from harness.usererror import UserError

if TYPE_CHECKING:  # imported where used: `harness run --help` stays free of the evaluator
    from sandbox.contract import Task

SET_HELP = ("Override a module-level global of the task file before its inputs are made (e.g. a "
            "KernelBench file's --set batch_size=16 --set dim=16384); repeatable; recorded in every "
            "verdict. A task too big for this machine is refused with the globals to set.")
# a suggested shrink leaves room: at most this share of the binding limit, and on a CPU (host
# timers; the suite's CPU profiles hold well under a MiB) inputs of at most CPU_INPUTS bytes
MARGIN, CPU_INPUTS, MAX_STEPS = 4, 16 * 2**20, 80


def set_option() -> Any:
    """``--set NAME=VALUE`` (repeatable) for ``harness eval``, ``eval-batch`` and ``run``."""
    import click

    return click.option("--set", "sets", multiple=True, metavar="NAME=VALUE", help=SET_HELP)


def parse_sets(items: Iterable[str]) -> dict[str, Any]:
    """``NAME=VALUE`` items -> {NAME: value}; VALUE is a Python literal (``16``, ``(16, 1024)``,
    ``0.5``, ``'x'``). One line (UserError) for an item that is not one."""
    out: dict[str, Any] = {}
    for item in items:
        name, eq, text = item.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise UserError(f"--set {item}: write NAME=VALUE with NAME a global of the task file "
                            "(e.g. --set batch_size=16)")
        try:
            out[name] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise UserError(f"--set {item}: {text.strip()!r} is not a Python literal; write a number, "
                            "a tuple such as (16, 1024), or a quoted string") from None
    return out


def apply_sets(tasks: Sequence[Task], sets: dict[str, Any]) -> list[Task]:
    """Each task with the globals of ``sets`` that it assigns (``Task.with_globals``). A single
    task must assign every NAME; of several (a suite, a batch), at least one must assign each."""
    if not sets:
        return list(tasks)
    known = [t.module_globals() for t in tasks]
    for name in sets:
        if not any(name in k for k in known):
            where = (f"{tasks[0].path}: not a module-level global of the file; its globals: "
                     f"{tasks[0].globals_text()}") if len(tasks) == 1 else \
                f"not a module-level global of any of the {len(tasks)} task files"
            raise UserError(f"--set {name}: {where}")
    from sandbox.contract import TaskError

    try:
        return [t.with_globals({n: v for n, v in sets.items() if n in k}) for t, k in zip(tasks, known, strict=True)]
    except TaskError as e:
        raise UserError(str(e)) from None


def apply_known(task: Task, sets: dict[str, Any]) -> Task:
    """``task`` with those of ``sets`` it assigns (a batch's or a suite's task; ``apply_sets``
    checked beforehand that every NAME is some task's)."""
    if not sets:
        return task
    known = task.module_globals()
    return task.with_globals({n: v for n, v in sets.items() if n in known})


def refuse_oversize(items: Sequence[tuple[Task, Any]]) -> None:
    """One line (UserError, exit 2) for the first task that does not fit this machine under
    its config: what one judgement needs, the limit, and the ``--set`` that fixes it (and how many
    more of ``items`` do not fit)."""
    bad = []
    for task, config in items:
        check = task.size_check(config)
        if check is not None and not check.fits:
            bad.append((task, config, check))
    if bad:
        more = f" ({len(bad) - 1} more task(s) too big here)" if len(bad) > 1 else ""
        raise UserError(oversize_message(*bad[0]) + more)


def oversize_message(task: Task, config: Any, check: Any) -> str:
    s = check.size
    out = "outputs not counted (its forward has no meta kernel)" if s.outputs is None else \
        f"outputs {_size(s.outputs)}"
    weights = f", weights {_size(s.weights)}" if s.weights else ""
    where = f" at profile {s.profile!r}" if s.profile != "default" else ""
    fix = _fix(task, config)
    return (f"{task.path}: too big to judge on {config.device}{where}: one judgement needs at least "
            f"{_size(check.need)} (inputs {_size(s.inputs)}, {out}{weights} per call; the judge keeps "
            f"two copies of each), above {check.limit_text}; {fix}")


def _fix(task: Task, config: Any) -> str:
    known = {k: v for k, v in task.module_globals().items() if _int(v)}
    if not known:
        return "judge it on a machine with more memory"
    hint = suggest(task, config)
    files = ", ".join(f"{k}={v}" for k, v in known.items())
    if hint:
        return (f"shrink it with {' '.join(f'--set {k}={v}' for k, v in hint.items())} (the file has {files})"
                + ("" if config.device.startswith("cuda") else ", or judge it on a GPU"))
    return f"shrink it with --set NAME=VALUE on its size globals ({files})"


def suggest(task: Task, config: Any) -> dict[str, int] | None:
    """Values of the file's integer globals that fit with room to spare (``MARGIN``; on a CPU
    inputs of at most ``CPU_INPUTS``): the largest global halved, again and again, each step
    checked on the meta device. None when no such values are found."""
    from sandbox.contract import TaskError

    values = {k: v for k, v in task.module_globals().items() if _int(v) and v > 1}
    cpu = not config.device.startswith("cuda")
    for _ in range(MAX_STEPS):
        name = max(values, key=lambda k: values[k], default=None)
        if name is None or values[name] <= 1:
            return None
        values[name] = max(1, values[name] // 2)
        try:
            check = task.with_globals(values).size_check(config)
        except TaskError:
            return None
        if check is None:
            return None
        if check.need * MARGIN <= check.limit and (not cpu or check.size.inputs <= CPU_INPUTS):
            original = task.module_globals()
            return {k: v for k, v in values.items() if v != original.get(k)}
    return None


def record_globals(verdict: Any, task: Task) -> Any:
    """The verdict with the task's ``--set`` values in its evidence (``task_globals``)."""
    if verdict is not None and task.globals_set:
        verdict.evidence["task_globals"] = dict(task.globals_set)
    return verdict


def globals_line(task_globals: dict[str, Any]) -> str:
    return "task globals set: " + ", ".join(f"{k}={v!r}" for k, v in task_globals.items())


def _int(v: Any) -> bool:
    return type(v) is int


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} bytes"
