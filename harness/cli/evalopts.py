"""The evaluator options ``harness eval`` and ``harness eval-batch`` share, and their
translation into the judging policy (``harness/policy.py``: the one place an ``EvalConfig`` is
built), so a batch judges exactly as one-at-a-time eval, a run and ``leaderboard verify`` do.

    @click.command()
    @eval_options()                     # --device --mode --sandbox --allow-torch-ops --seed ...
    def cli(device, mode, sandbox, allow_torch_ops, seed, profile, timeout, max_timing_s, rules,
            allow_degenerate): ...

    cfg = eval_config(task, device=..., mode=..., ..., candidate_name="k.py")
    refuse_degenerate([(task, cfg)], allow=allow_degenerate)   # the task check, before judging
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from sandbox.contract import EvalConfig, Task

def default_device() -> str:
    from harness.env.devices import resolve_device

    return resolve_device(None)


def eval_options(after_mode: Sequence[Callable[[Any], Any]] = ()) -> Callable[[Any], Any]:
    """The evaluator's click options in ``harness eval``'s order; ``after_mode``: more option
    decorators placed between ``--mode`` and ``--sandbox`` (eval's ``--json``)."""
    opts = [
        click.option("--device", default=None, help="cuda | cuda:N | cpu (default: cuda if available)"),
        click.option("--mode", type=click.Choice(["feedback", "final"]), default="final", show_default=True),
        *after_mode,
        click.option("--sandbox", type=click.Choice(["process", "docker"]), default="process",
                     show_default=True, help="Where the candidate is judged: process = the namespace/seccomp "
                     "jail, docker = a container."),
        click.option("--allow-torch-ops", is_flag=True,
                     help="Research use: no custom-code rule at all, torch may compute everything (recorded; "
                     "never ranked). KernelBench's setting, torch beside the candidate's kernels, is --rules "
                     "partial."),
        click.option("--seed", type=int, default=None,
                     help="Public seed (feedback mode); final mode draws a secret one."),
        click.option("--profile", default=None,
                     help="Shape profile (default: 'small' on CPU when the task has it)."),
        click.option("--timeout", type=float, default=600.0, show_default=True, help="Wall limit in seconds."),
        click.option("--max-timing-s", type=float, default=None, help="Time cap per measured callable."),
        rules_option(),
        allow_degenerate_option(),
    ]  # fmt: skip

    def deco(f: Any) -> Any:
        for opt in reversed(opts):  # click lists options in decoration order, outermost first
            f = opt(f)
        return f

    return deco


def rules_option() -> Any:
    """``--rules strict|partial``: the rule set that judges (recorded in every verdict)."""
    from sandbox.contract import RULE_SETS, STRICT

    return click.option("--rules", type=click.Choice(RULE_SETS), default=STRICT, show_default=True,
                        help="Rule set: strict = the candidate's own code computes everything; partial = "
                        "torch may run beside its kernels, but it must replace at least one compute op "
                        "of the reference (KernelBench's default setting). Recorded in every verdict.")


def eval_config(
    task: Task,
    *,
    device: str,
    mode: str,
    sandbox: str,
    seed: int | None,
    profile: str | None,
    timeout: float,
    allow_torch_ops: bool,
    max_timing_s: float | None,
    candidate_name: str,
    rules: str = "strict",
    allow_degenerate: bool = False,
) -> EvalConfig:
    """The ``EvalConfig`` for these command-line options: the judging policy
    (``harness.policy.eval_config``) with the options as explicit settings."""
    from harness.policy import eval_config as policy_config

    return policy_config(
        mode, device, task=task, sandbox=sandbox, rules=rules, seed=seed, profile=profile,
        timeout_s=timeout, allow_torch_ops=allow_torch_ops, max_timing_s=max_timing_s,
        candidate_name=candidate_name, allow_degenerate=allow_degenerate or None,
    )  # fmt: skip


def allow_degenerate_option() -> Any:
    """``--allow-degenerate``: judge a task the check ``task.degenerate`` refuses (recorded)."""
    return click.option("--allow-degenerate", is_flag=True,
                        help="Judge a task whose reference output does not change when its inputs and weights "
                        "are redrawn (refused by the task check task.degenerate; `harness suite lint` lists "
                        "them). Research use; recorded in the verdict.")


def refuse_degenerate(items: Sequence[tuple[Task, EvalConfig]], allow: bool = False,
                      on_pass: Callable[[Task, EvalConfig], None] | None = None) -> None:
    """The task check before judging (sandbox/intake/taskcheck.py: kept per task, run in a reference
    worker where it is not): a degenerate task is one line on stderr and exit 2, unless ``allow``.
    A task whose reference fails the check is left to judging, which reports it. ``on_pass(task,
    config)`` as each task passes (eval-batch judges it from then on), while the others are checked."""
    from sandbox.contract import DegenerateTask, SandboxUnavailable, check_tasks, task_check_timing

    def answered(task: Task, config: EvalConfig, result: Any) -> None:
        if on_pass is not None and (allow or not result.degenerate):
            on_pass(task, config)

    t0 = time.monotonic()
    try:
        results = check_tasks(items, on_answer=answered)
    except SandboxUnavailable as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    line = task_check_timing(results, time.monotonic() - t0)
    if line:
        click.echo(line, err=True)
    bad = list({r.path: r for r in results if r.degenerate}.values())
    if bad and not allow:
        more = f" ({len(bad) - 1} more degenerate task(s); `harness suite lint` lists them)" if len(bad) > 1 else ""
        click.echo(f"error: {DegenerateTask(bad[0])}{more}", err=True)
        sys.exit(2)
