"""``harness eval REFERENCE CANDIDATE``: judge one candidate kernel against one reference op.

Exit status: 0 valid, 1 any other verdict, 2 unusable input (names the file and the fix;
never recorded as a kernel verdict), among them a reference the task check refuses
(task.degenerate, sandbox/intake/taskcheck.py; ``--allow-degenerate`` judges it, recorded in the verdict).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from harness.cli.evalopts import default_device, eval_config, eval_options, refuse_degenerate
from harness.estimate import speedup_words
from harness.tasksize import (
    apply_sets,
    globals_line,
    parse_sets,
    record_globals,
    refuse_oversize,
    set_option,
)
from sandbox.contract import Verdict

_default_device = default_device  # the name this module had before evalopts.py


def _up(x: float) -> str:
    """x rounded up to two significant digits (a bound that still holds once printed)."""
    if x <= 0:
        return "0"
    e = math.floor(math.log10(x)) - 1
    return f"{math.ceil(x / 10**e - 1e-9) * 10**e:.2g}"


def tolerance_line(tol: dict) -> str:
    """One line of tolerance evidence (Verdict.tolerance): the errors, the tightest atol=rtol
    passed, and KernelBench v0.1's 1e-2 (the verdict's own rule is the task's atol/rtol)."""
    t = tol.get("tightest")
    tight = "passes no atol=rtol (NaN/inf or integer mismatch)" if t is None else f"passes atol=rtol >= {_up(t)}"
    return (f"tolerance: max abs {tol.get('max_abs_err', 0.0):.2g}, max rel {tol.get('max_rel_err', 0.0):.2g}; "
            f"{tight}; passes KernelBench v0.1's 1e-2: {'yes' if tol.get('passes_1e-2') else 'no'}"
            f" (rule: atol {tol.get('atol', 0.0):g}, rtol {tol.get('rtol', 0.0):g})")


def summary(v: Verdict) -> str:
    lines = [f"status:   {v.status.value}" + (f"  (rule {v.rule})" if v.rule else "")]
    if v.message:
        lines.append(f"message:  {v.message}")
    lines.append(
        f"task:     {v.task}   mode: {v.mode.value}   device: {v.device}   rules: {v.rules}"
        + ("   [host timers: CPU numbers are for tests only]" if v.host_timers else "")
    )
    failed = [t for t in v.trials if not t.passed]
    if failed:
        t = failed[0]
        lines.append(
            f"failing trial {t.index} ({t.shape_label}): max abs err {t.max_abs_err}, "
            f"mismatch {t.mismatch_fraction}: {t.note}"
        )
    elif v.trials:
        worst = max((t.max_abs_err or 0.0) for t in v.trials)
        lines.append(f"trials:   {len(v.trials)} passed (max abs err {worst:.3g})")
    if v.tolerance:
        lines.append(tolerance_line(v.tolerance))
    share = v.evidence.get("custom_share")
    if share is not None:
        lines.append(f"custom share: {100 * share:.1f}% ({v.evidence.get('custom_share_basis', '')})")
    for name, m in v.timings.items():
        lines.append(
            f"time {name:9s} median {m.median_us:10.2f} us  95% CI [{m.ci_low_us:.2f}, {m.ci_high_us:.2f}]"
            f"  n={m.n}{'' if m.converged else '  (not converged: time cap)'}"
        )
    for b, s in v.speedups.items():
        lines.append(f"speedup vs {b:7s} {speedup_words(s, b)}")
    if v.speed_of_light:
        lines.append(
            "speed of light: " + ", ".join(f"{k} {val:.1f}%" for k, val in v.speed_of_light.items())
        )
    if v.evidence.get("task_globals"):  # --set (harness/tasksize.py)
        lines.append(globals_line(v.evidence["task_globals"]))
    if v.evidence.get("accommodations"):  # the class judged, as the file binds it (sandbox/intake/candidate.py)
        lines.append("candidate: " + "; ".join(v.evidence["accommodations"]))
    if v.allow_torch_ops:
        lines.append("note: --allow-torch-ops was set (research run; not leaderboard-eligible)")
    if v.evidence.get("allow_degenerate"):
        tc = v.evidence.get("task_check") or {}
        what = {True: "the task check found it degenerate", False: "the task check passed it"}.get(
            tc.get("degenerate"), "the task was not checked")
        lines.append(f"note: --allow-degenerate was set ({what}; research run)")
    if v.logs:
        lines.append("log (truncated):\n" + "\n".join("  " + ln for ln in v.logs.splitlines()[:40]))
    if v.durations_s:
        lines.append(
            "durations: " + ", ".join(f"{k} {val:.1f}s" for k, val in v.durations_s.items())
        )
    return "\n".join(lines)


@click.command("eval")
@click.argument("reference", type=click.Path(dir_okay=False))
@click.argument("candidate", type=click.Path(dir_okay=False))
@eval_options(after_mode=[click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")])
@click.option("--unsafe-no-isolation", is_flag=True,
              help="Judge even where no jail can be made (harness doctor says why); recorded in the verdict.")
@set_option()
def cli(
    reference: str,
    candidate: str,
    # eval_options() (cli/evalopts.py) as click passes them, one typed parameter each (as in eval_batch.py)
    device: str | None,
    mode: str,
    as_json: bool,
    sandbox: str,
    allow_torch_ops: bool,
    seed: int | None,
    profile: str | None,
    timeout: float,
    max_timing_s: float | None,
    rules: str = "strict",
    allow_degenerate: bool = False,
    unsafe_no_isolation: bool = False,
    sets: tuple[str, ...] = (),
) -> None:
    """Judge CANDIDATE (a ModelNew source) against REFERENCE (a KernelBench-format task)."""
    import os

    from sandbox.contract import SandboxUnavailable

    if unsafe_no_isolation:
        os.environ["HARNESS_UNSAFE_NO_ISOLATION"] = "1"
    from harness.env.devices import resolve_device
    from sandbox.contract import CandidateError, TaskError, evaluate, load_task

    device = resolve_device(device)
    globals_set = parse_sets(sets)
    if device == "cpu" and not as_json:
        click.echo(
            "warning: CPU evaluation uses host timers; its timings are for tests only", err=True
        )
    try:
        task = load_task(reference)
    except TaskError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    task = apply_sets([task], globals_set)[0]
    cpath = Path(candidate)
    if not cpath.is_file():
        click.echo(f"error: {cpath}: no such candidate file", err=True)
        sys.exit(2)
    cfg = eval_config(task, device=device, mode=mode, sandbox=sandbox, seed=seed, profile=profile,
                      timeout=timeout, allow_torch_ops=allow_torch_ops, max_timing_s=max_timing_s,
                      candidate_name=cpath.name, rules=rules, allow_degenerate=allow_degenerate)
    refuse_oversize([(task, cfg)])  # before any worker: the task's size against this machine
    refuse_degenerate([(task, cfg)], allow=allow_degenerate)  # the task check (sandbox/intake/taskcheck.py)
    try:
        v = record_globals(evaluate(task, cpath.read_text(), cfg), task)
    except CandidateError as e:
        msg = str(e)
        click.echo(f"error: {msg if str(cpath) in msg else f'{cpath}: {msg}'}", err=True)
        sys.exit(2)
    except TaskError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    except SandboxUnavailable as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(v.to_json(indent=2) if as_json else summary(v))
    sys.exit(0 if v.valid else 1)
