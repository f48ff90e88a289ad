"""``harness run``: run an optimizer (method) over ops of the suite, resumable by run id."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from harness.cli import runchecks
from harness.cli.evalopts import allow_degenerate_option, rules_option
from harness.llm.cli_options import llm_options, note_concurrency
from harness.methods.base import Budget
from harness.tasksize import parse_sets, set_option


@click.command("run")
@click.option("--method", "-m", required=True, help="Method name (see `harness methods list`).")
@click.option(
    "--suite",
    default=None,
    help="Suite name (smoke, level1, level2, full) or a KernelBench folder/file.",
)
@click.option("--ops", default=None, help="Comma-separated op names (instead of --suite).")
@llm_options
@click.option(
    "--budget",
    type=int,
    default=None,
    help="Evaluations per op (default: the method's, 45 for most).",
)
@click.option("--budget-llm-calls", type=int, default=None, help="Max LLM calls per op (default: no cap).")
@click.option("--budget-tokens", type=int, default=None, help="Max prompt+completion tokens per op.")
@click.option("--budget-wall-s", type=float, default=None, help="Max wall-clock seconds per op.")
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the method's choices and the offline model.",
)
@click.option(
    "--device",
    default=None,
    help="cuda | cuda:N | cpu: where candidates run (default: cuda when available).",
)
@click.option(
    "--results",
    type=click.Path(file_okay=False),
    default="results",
    show_default=True,
    help="Results directory (holds harness.sqlite).",
)
@click.option("--run-id", default=None, help="Resume (or name) a run: finished ops are skipped.")
@click.option(
    "--sandbox", type=click.Choice(["process", "docker"]), default="process", show_default=True,
    help="Where each CANDIDATE is judged: process = the namespace/seccomp jail, docker = a container "
         "(not where the method runs: that is --isolate).",
)
@click.option("--jobs", type=int, default=1, show_default=True, help="Ops optimised in parallel.")
@click.option(
    "--option",
    "-o",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Method option (e.g. -o population_size=5); values parsed as int/float/bool when they look so.",
)
@click.option(
    "--eval-option",
    "eval_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Evaluator setting for this run (an EvalConfig field, e.g. max_timing_s=2); recorded with the run.",
)
@click.option(
    "--executor",
    type=click.Choice(["serial", "local", "ray"]),
    default="serial",
    show_default=True,
    help="serial: judge one candidate after another; local: compile workers build ahead of one "
    "timing worker per GPU (use with --jobs N); ray: the same on a Ray cluster (docs/performance.md).",
)
@click.option("--ray-address", default=None, help="--executor ray: cluster address (default: a local Ray).")
@click.option(
    "--compile-workers", type=int, default=None, help="--executor local: build workers (default: CPUs - 1)."
)
@click.option(
    "--isolate",
    type=click.Choice(["process", "docker"]),
    default=None,
    help="Run the METHOD itself as an isolated program that reaches the harness only through the "
    "evaluation endpoint and the LLM gateway (no network, no upstream key; docs/method-protocol.md). "
    "Candidates are judged in --sandbox either way.",
)
@click.option("--quiet", is_flag=True, help="No progress lines (the summary is still printed).")
@click.option(
    "--seeds",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Independent runs of the method with seeds SEED, SEED+1, ... (the method's and the LLM's "
    "sampling seed; each run's id gets -s<seed>); the leaderboard's entry is over them, with a CI "
    "over seeds.",
)
@click.option(
    "--final-sessions",
    type=click.IntRange(min=1),
    default=None,
    help="Independent judging sessions (fresh workers) of each op's final kernel; the published "
    "interval is over them. Default: 3 on cuda, 1 on cpu.",
)
@click.option(
    "--seed-kernels",
    default="suite",
    show_default=True,
    metavar="DIR|suite|none",
    help="Seed kernels for the methods that start from one (EvoEngineer, FunSearch, AI CUDA "
    "Engineer): a folder of <language>/<op>.py, 'suite' for the shipped ones, 'none' for none.",
)
@click.option(
    "--archive",
    default=None,
    type=click.Path(dir_okay=False),
    help="ai-cuda-engineer: innovation archive file, read at the start and updated as ops finish "
    "(it persists across runs).",
)
@rules_option()
@allow_degenerate_option()
@set_option()
def cli(
    method: str,
    suite: str | None,
    ops: str | None,
    budget: int | None,
    budget_llm_calls: int | None,
    budget_tokens: int | None,
    budget_wall_s: float | None,
    seed: int,
    device: str | None,
    results: str,
    run_id: str | None,
    sandbox: str,
    jobs: int,
    options: tuple[str, ...],
    eval_options: tuple[str, ...],
    executor: str,
    ray_address: str | None,
    compile_workers: int | None,
    isolate: str | None,
    quiet: bool,
    seed_kernels: str,
    archive: str | None,
    llm_spec: str | None,
    llm_config: Any,
    rules: str = "strict",
    allow_degenerate: bool = False,
    seeds: int = 1,
    final_sessions: int | None = None,
    sets: tuple[str, ...] = (),
) -> None:
    """Run METHOD over ops of the suite: search in feedback mode, re-judge each op's best kernel
    in final mode, store everything in RESULTS/harness.sqlite, print a summary table.

    \b
    Examples:
      harness run --method evoengineer --llm offline --suite smoke --device cpu --budget 3
      harness run --method best-of-n --llm openai:gpt-4.1 --ops relu,softmax --budget 45
      harness run --method evoengineer --run-id RUN   # resume: finished ops are skipped
      harness run --method evoengineer --llm openai:gpt-4.1 --suite level1 --seeds 3

    Exit status: 0 every op finished, 1 some op failed, 2 unusable input, 3 an LLM outage stopped
    the run (what was found is final-judged), 130 / 143 SIGINT / SIGTERM stopped it; after 3, 130
    and 143 the run is stored interrupted and the resume command is printed.
    """
    from harness.methods.registry import UnknownMethod
    from harness.runner import RunConfig, run
    from harness.runner.tasks import TaskSelectionError
    from harness.store import StoreError

    if suite and ops:
        raise click.UsageError("give either --suite or --ops, not both")
    if not suite and not ops:
        raise click.UsageError(
            "choose the ops: --suite smoke (or level1, full) or --ops relu,softmax"
        )
    from harness.env.devices import resolve_device

    device = resolve_device(device)
    if jobs < 1:
        raise click.UsageError("--jobs must be >= 1")
    llm_spec = llm_spec or "offline"
    note_concurrency(jobs, llm_spec, llm_config)
    overrides = runchecks.eval_overrides(eval_options)
    if allow_degenerate:  # in every EvalConfig of the run (the policy) and in the run's stored config
        overrides["allow_degenerate"] = True
    task_globals = parse_sets(sets)
    try:
        runchecks.check_tasks(suite, ops, device, sandbox, rules, overrides, task_globals)
    except TaskSelectionError as e:
        raise click.UsageError(str(e)) from e
    runchecks.check_seed_kernels(seed_kernels)
    runchecks.check_archive(archive)
    cfg = RunConfig(
        method=method,
        suite=suite,
        ops=[o.strip() for o in ops.split(",") if o.strip()] if ops else None,
        llm=llm_spec,
        llm_config=llm_config,
        budget=Budget(evaluations=budget) if budget is not None else None,
        budget_limits={
            k: v
            for k, v in (
                ("llm_calls", budget_llm_calls),
                ("tokens", budget_tokens),
                ("wall_s", budget_wall_s),
            )
            if v is not None
        },
        seed=seed,
        device=device,
        results=Path(results),
        run_id=run_id,
        sandbox=sandbox,
        jobs=jobs,
        method_options=runchecks.parse_options(options),
        eval_overrides=overrides,
        progress=not quiet,
        executor=executor,
        ray_address=ray_address,
        compile_workers=compile_workers,
        isolate=isolate,
        rules=rules,
        final_sessions=final_sessions,
        seed_kernels=seed_kernels,
        archive=archive,
        task_globals=task_globals,
        command=["harness", *click.get_current_context().meta.get("harness.argv", ["run"])],
    )
    from harness.runner.stop import RunInterrupted, stop_signals

    failed = []
    configs = seed_configs(cfg, seeds)
    for i, one in enumerate(configs):
        try:
            with stop_signals():  # SIGTERM as SIGINT, both latched: the run is stored interrupted (runner/stop.py)
                report = run(one)
        except RunInterrupted as e:
            click.echo(f"harness: run {e.run_id} {e.reason}; stored as interrupted; resume with: "
                       f"{_resume(cfg, seeds, one, e.run_id, configs[i + 1:])}", err=True)
            sys.exit(e.exit_code)
        except KeyboardInterrupt as e:  # before the run began its ops: nothing judged, nothing to resume
            from harness.runner.stop import signal_reason

            reason, code = signal_reason(e)
            click.echo(f"harness: {reason} before the run began its ops; run the command again to start it",
                       err=True)
            sys.exit(code)
        except (UnknownMethod, TaskSelectionError) as e:
            raise click.UsageError(str(e)) from e
        except StoreError:  # an unusable --results, a resumed run given another --rules: one line, exit 2
            raise
        except ValueError as e:
            raise click.ClickException(str(e)) from e
        click.echo(report.table())
        if report.errors():  # in full: the table's status column has room for its first words only
            click.echo("\nerrors:\n" + report.errors())
        click.echo(
            f"\nrun {report.run_id} (seed {one.seed}): results in {report.results_path}"
            f"{' (offline model: dry run)' if llm_spec.startswith('offline') else ''}"
        )
        if report.stopped:  # an LLM outage (runner/stop.py): what was found is final-judged
            click.echo(f"harness: run {report.run_id} stopped: {report.stopped.splitlines()[0]}; the valid "
                       "kernels found so far were final-judged; resume with: "
                       f"{_resume(cfg, seeds, one, report.run_id, configs[i + 1:])}", err=True)
            sys.exit(EXIT_INTERRUPTED)
        if report.failed:
            failed.append(report)
    for report in failed:
        click.echo(
            f"{len(report.failed)} op(s) failed; rerun with --run-id {report.run_id} to retry them",
            err=True,
        )
    if failed:
        sys.exit(1)


EXIT_INTERRUPTED = 3  # an LLM outage stopped the run (130: SIGINT, 143: SIGTERM); resumable


def _resume(cfg: Any, seeds: int, one: Any, run_id: str, later: list[Any]) -> str:
    """The command that resumes ``run_id``: this command with ``--run-id`` (with ``--seeds N`` and
    an id given, the same id resumes every seed; without one, this seed alone, then the rest)."""
    from harness.runner.stop import resume_command

    argv = ["harness", *click.get_current_context().meta.get("harness.argv", ["run"])]
    if seeds == 1:
        return resume_command(argv, run_id)
    if cfg.run_id:
        return resume_command(argv, cfg.run_id)
    cmd = resume_command(argv, run_id, seed=one.seed)
    if later:
        rest = resume_command(argv, None, seed=later[0].seed)
        cmd += f" (then the seeds not begun: {rest} --seeds {len(later)})"
    return cmd


def seed_configs(cfg: Any, seeds: int) -> list[Any]:
    """The runs of ``--seeds N``: seeds cfg.seed .. cfg.seed + N - 1, one run each (id suffixed
    ``-s<seed>`` when an id was given). Each run's seed is the method's seed and the offline
    model's; where the LLM config takes a sampling seed (``seed``), run i asks the LLM for the
    configured seed + i, or the run's seed when none was configured (the run records it in its
    ``llm_settings``)."""
    import dataclasses

    if seeds == 1:
        return [cfg]
    out = []
    for i in range(seeds):
        seed = cfg.seed + i
        llm_config = cfg.llm_config
        fields = {f.name for f in dataclasses.fields(llm_config)} if dataclasses.is_dataclass(llm_config) else set()
        if "seed" in fields:
            base = getattr(llm_config, "seed", None)
            llm_config = dataclasses.replace(llm_config, seed=seed if base is None else base + i)
        out.append(dataclasses.replace(
            cfg, seed=seed, llm_config=llm_config,
            run_id=f"{cfg.run_id}-s{seed}" if cfg.run_id else None,
        ))  # fmt: skip
    return out
