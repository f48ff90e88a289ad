"""The judging policy: the one place an ``EvalConfig`` is built.

    cfg = eval_config(Mode.FINAL, "cuda", task=task, rules="strict", overrides=run_overrides)

The runner (feedback and final verdicts of a run), ``harness eval`` and ``harness eval-batch``
(through ``harness/cli/evalopts.py``) and ``harness leaderboard verify`` all call it, so a
kernel is judged under the same settings wherever it is judged. The policy per mode:

* profile: ``small`` on a CPU (host timers: tests only) when the task has that profile,
  ``default`` on a GPU;
* baselines: ``eager`` only in feedback mode (it times no other) and on a CPU; ``eager`` and
  ``torch.compile`` in final mode on a GPU;
* seed: feedback mode's public inputs follow the given seed (the run's ``--seed``); final mode
  draws a secret one in the evaluator, so no seed is set;
* then the run's recorded overrides (``harness run --eval-option KEY=VALUE``, stored in the
  run's config as ``eval_overrides``), then the caller's explicit options (``--profile``,
  ``--max-timing-s``, ...; a ``None`` option keeps the default);
* ``mode``, ``device``, ``sandbox`` and ``rules`` are always the arguments: no override changes
  them (the rule set is the run's track on the leaderboard).

A leaf of ``harness/``: it imports only the evaluator's config and verdict types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.contract import EvalConfig, Mode, Task

FIXED = ("mode", "device", "sandbox", "rules")  # from the arguments, never from an override


def is_cpu(device: str) -> bool:
    return not device.startswith("cuda")


def default_profile(device: str, task: Task | None = None) -> str:
    """``small`` on a CPU when the task has it (any task when none is given), else ``default``."""
    if is_cpu(device) and (task is None or "small" in getattr(task, "shapes", {})):
        return "small"
    return "default"


def default_baselines(mode: Mode, device: str) -> tuple[str, ...]:
    if mode is Mode.FEEDBACK or is_cpu(device):
        return ("eager",)
    return ("eager", "compile")


def eval_config(
    mode: Mode | str,
    device: str,
    *,
    task: Task | None = None,
    sandbox: str = "process",
    rules: str = "strict",
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    **options: Any,
) -> EvalConfig:
    """The ``EvalConfig`` judging in ``mode`` on ``device`` (see the module docstring).

    ``overrides``: the run's recorded evaluator settings; ``options``: explicit settings of
    the caller (``EvalConfig`` field names; ``None`` values are left out).
    """
    mode = Mode(mode)
    kw: dict[str, Any] = {
        "profile": default_profile(device, task),
        "baselines": default_baselines(mode, device),
    }
    if mode is Mode.FEEDBACK and seed is not None:
        kw["seed"] = seed
    kw.update(overrides or {})
    kw.update({k: v for k, v in options.items() if v is not None})
    kw.update(mode=mode, device=device, sandbox=sandbox, rules=rules)
    # a recorded override read back from JSON holds lists where EvalConfig holds tuples
    return EvalConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()})
