"""``harness eval-batch SOURCE --out DIR``: judge many (reference, candidate) pairs through the
pipeline executor, resumably (harness/batch/, docs/evaluator.md "Batches").

Exit status: 0 every pair was judged (whatever the verdicts), 1 some could not be judged (their
input errors are listed), 2 unusable arguments (nothing is judged; the message names the file,
line or field, and the fix), among them a reference the task check refuses (task.degenerate,
sandbox/intake/taskcheck.py; ``--allow-degenerate`` judges it, recorded in each verdict).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from harness.cli.evalopts import eval_config, eval_options, refuse_degenerate
from harness.tasksize import apply_known, apply_sets, parse_sets, refuse_oversize, set_option

if TYPE_CHECKING:
    from harness.batch.driver import BatchOptions
    from harness.batch.inputs import Pair
    from sandbox.contract import EvalConfig, Task


@click.command("eval-batch")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "-o",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Output folder: results.jsonl, results.csv, verdicts/. Re-running with the same "
    "folder skips kernels already judged.",
)
@click.option(
    "--reference",
    type=click.Path(path_type=Path),
    default=None,
    help="SOURCE is a folder of ModelNew files, all judged against this task file.",
)
@click.option(
    "--kernelbench",
    type=click.Path(path_type=Path),
    default=None,
    help="A KernelBench checkout: the references of a level_N/problem_K tree "
    "(default: our suite, reference_ops/).",
)
@eval_options()
@click.option(
    "--jobs",
    "-j",
    type=int,
    default=None,
    help="Compile workers building ahead of the timing lane (default: CPUs - 1).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray", "serial"]),
    default="local",
    show_default=True,
    help="local: compile workers + one timing lane per device; ray: "
    "the same on a Ray cluster; serial: one after another.",
)
@click.option(
    "--ray-address", default=None, help="--executor ray: cluster address (default: a local Ray)."
)
@click.option(
    "--store",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also record the batch as an evaluation-only run in this results store "
    "(a folder holding harness.sqlite, as `harness run --results`).",
)
@click.option(
    "--label", default=None, help="The batch's name in the store (default: SOURCE's name)."
)
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
@set_option()
def cli(
    source: Path,
    out: Path,
    reference: Path | None,
    kernelbench: Path | None,
    # eval_options() (cli/evalopts.py) as click passes them, one typed parameter each (as in eval.py)
    device: str | None,
    mode: str,
    sandbox: str,
    allow_torch_ops: bool,
    seed: int | None,
    profile: str | None,
    timeout: float,
    max_timing_s: float | None,
    rules: str,
    allow_degenerate: bool,
    jobs: int | None,
    executor: str,
    ray_address: str | None,
    store: Path | None,
    label: str | None,
    quiet: bool,
    sets: tuple[str, ...] = (),
) -> None:
    """Judge every candidate of SOURCE: a KernelBench-style tree (level_N/problem_K*.py or
    level_N/K_Name/*.py), a folder of ModelNew files (with --reference FILE), or a JSONL
    manifest ({"id", "reference", "candidate"} per line, optional "mode" and "device").

    \b
    Examples:
      harness eval-batch runs/gpt4 --kernelbench ~/KernelBench --out results/gpt4
      harness eval-batch kernels/ --reference reference_ops/activation/relu.py --out out/relu
      harness eval-batch pairs.jsonl --out out/pairs --jobs 8 --store results
    """
    from harness.batch.driver import BatchOptions, run_batch
    from harness.batch.inputs import BatchInputError, discover

    if jobs is not None and jobs < 0:
        raise click.UsageError("--jobs must be >= 0")
    from harness.env.devices import resolve_device

    device = resolve_device(device)
    globals_set = parse_sets(sets)
    try:
        kind, pairs, ignored = discover(source, reference=reference, kernelbench=kernelbench)
    except BatchInputError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    if ignored and not quiet:
        shown = ", ".join(str(p) for p in ignored[:3]) + (" ..." if len(ignored) > 3 else "")
        click.echo(f"note: {len(ignored)} file(s) fit no tree layout, ignored: {shown}", err=True)
    if device == "cpu" and not quiet:
        click.echo(
            "warning: CPU evaluation uses host timers; its timings are for tests only", err=True
        )
    opts = BatchOptions(
        out=out,
        device=device,
        mode=mode,
        sandbox=sandbox,
        seed=seed,
        profile=profile,
        timeout=timeout,
        allow_torch_ops=allow_torch_ops,
        max_timing_s=max_timing_s,
        rules=rules,
        allow_degenerate=allow_degenerate,
        executor=executor,
        jobs=jobs,
        ray_address=ray_address,
        store=store,
        label=label or source.resolve().name,
        progress=not quiet,
        task_globals=globals_set,
    )
    checks = _task_configs(pairs, opts)
    apply_sets([t for t, _ in checks], globals_set)  # every NAME is some reference's global (else exit 2)
    refuse_oversize(checks)  # before any worker: each reference's size against this machine
    # the task check (sandbox/intake/taskcheck.py) runs while the compile workers build the
    # candidates; a task's candidates are judged once its check passed, and a refusal (exit 2)
    # stops the batch: no candidate of the refused task is judged or written
    report = run_batch(
        pairs, opts,
        before_judging=lambda on_pass: refuse_degenerate(checks, allow=allow_degenerate, on_pass=on_pass),
    )
    counts = ", ".join(f"{k} {n}" for k, n in sorted(report.counts.items()))
    click.echo(
        f"{len(report.rows)} kernels ({kind}): {counts}; {report.judged} judged now, "
        f"{report.skipped} earlier"
    )
    click.echo(f"results: {out / 'results.jsonl'}, {out / 'results.csv'}, {out / 'verdicts'}/")
    if report.run_id:
        click.echo(f"store: run {report.run_id} in {store}")
    if report.unjudged:
        click.echo(f"{len(report.unjudged)} kernel(s) could not be judged:", err=True)
        for r in report.unjudged:
            click.echo(f"  {r['id']}: [{r['status']}] {r['message']}", err=True)
    sys.exit(report.exit_code)


def _task_configs(pairs: list[Pair], opts: BatchOptions) -> list[tuple[Task, EvalConfig]]:
    """(task, the config it will be judged with) for each reference the batch names (once per
    reference, device and mode); references that do not load are left to the batch's own rows."""
    from sandbox.contract import TaskError, load_task

    out: list[tuple[Task, EvalConfig]] = []
    seen: set[tuple[Path, str, str]] = set()
    for p in pairs:
        device, mode = p.device or opts.device, p.mode or opts.mode
        if p.error or p.reference is None or (p.reference.resolve(), device, mode) in seen:
            continue
        seen.add((p.reference.resolve(), device, mode))
        try:
            task = apply_known(load_task(p.reference), opts.task_globals)
        except TaskError:
            continue
        out.append((task, eval_config(task, device=device, mode=mode, sandbox=opts.sandbox, seed=opts.seed,
                                      profile=opts.profile, timeout=opts.timeout, allow_torch_ops=opts.allow_torch_ops,
                                      max_timing_s=opts.max_timing_s, candidate_name="", rules=opts.rules,
                                      allow_degenerate=opts.allow_degenerate)))
    return out
