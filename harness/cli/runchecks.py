"""``harness run``'s options read and checked before anything runs (harness/cli/run.py): the
``KEY=VALUE`` settings of ``--option`` and ``--eval-option``, the ops (sizes, ``--set`` globals, the
task check), the seed kernels and an ``--archive`` file. Bad input is one line naming the option and
the fix (click's ``BadParameter``), or exit 2 for a task this machine cannot judge."""

from __future__ import annotations

from typing import Any

import click


def parse_options(items: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise click.BadParameter(f"{item!r}: write KEY=VALUE", param_hint="--option")
        k, v = item.split("=", 1)
        out[k.strip().replace("-", "_")] = _value(v.strip())
    return out


def eval_overrides(items: tuple[str, ...]) -> dict[str, Any]:
    import dataclasses

    from harness.policy import FIXED
    from sandbox.contract import EvalConfig

    allowed = {f.name for f in dataclasses.fields(EvalConfig)} - set(FIXED)
    out = parse_options(items)
    bad = sorted(set(out) - allowed)
    if bad:
        raise click.BadParameter(
            f"unknown evaluator setting(s) {bad}; allowed: {sorted(allowed)}",
            param_hint="--eval-option",
        )
    if "baselines" in out and isinstance(out["baselines"], str):
        out["baselines"] = tuple(b for b in out["baselines"].split("+") if b)
    return out


def _value(v: str) -> Any:
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    for kind in (int, float):
        try:
            return kind(v)
        except ValueError:
            pass
    return v


def check_tasks(suite: str | None, ops: str | None, device: str, sandbox: str, rules: str,
                 overrides: dict[str, Any], task_globals: dict[str, Any] | None = None) -> None:
    """The task check (sandbox/intake/taskcheck.py) of every op, at the profile its verdicts will use, before
    anything runs: a degenerate task is one line and exit 2 unless --allow-degenerate. Before it, the
    ``--set`` globals (each must be some op's) and each op's size against this machine
    (harness/tasksize.py), in final mode (its extra shapes too): one line and exit 2."""
    from harness.cli.evalopts import refuse_degenerate
    from harness.policy import eval_config
    from harness.runner.tasks import resolve_tasks
    from harness.tasksize import apply_sets, refuse_oversize

    tasks = resolve_tasks(suite, [o.strip() for o in ops.split(",") if o.strip()] if ops else None)
    tasks = apply_sets(tasks, task_globals or {})
    refuse_oversize([(t, eval_config("final", device, task=t, sandbox=sandbox, rules=rules,
                                     overrides=overrides)) for t in tasks])
    refuse_degenerate([(t, eval_config("feedback", device, task=t, sandbox=sandbox, rules=rules,
                                       overrides=overrides)) for t in tasks],
                      allow=bool(overrides.get("allow_degenerate")))


def check_seed_kernels(spec: str) -> None:
    from harness.suite.suites import SuiteError

    try:
        from harness.suite.seeds import seeds_dir

        seeds_dir(spec)
    except SuiteError as e:
        raise click.BadParameter(str(e), param_hint="--seed-kernels") from e


def check_archive(path: str | None) -> None:
    if not path:
        return
    from harness.methods.archive import ArchiveFileError, load_file

    try:
        load_file(path)
    except ArchiveFileError as e:
        raise click.BadParameter(str(e), param_hint="--archive") from e
