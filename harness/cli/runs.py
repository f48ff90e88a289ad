"""``harness runs list/show/export``: read stored runs from a results store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from harness.estimate import direction_of
from harness.store.db import DB_NAME


def open_results(results: str):
    from harness.store.repo import Results

    path = Path(results) / DB_NAME
    if not path.is_file():
        raise click.ClickException(
            f"no results store at {path}; run `harness run ...` first or pass --results DIR"
        )
    return Results.open(results)


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()
    out = [line, "  ".join("-" * w for w in widths)]
    out += [
        "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(out)


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, dict) and "value" in v:  # a speedup: value, 95% interval, its direction
        lo, hi = v["ci"]
        return f"{v['value']:.2f}x [{lo:.2f}, {hi:.2f}] {direction_of(lo, hi)}"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


results_option = click.option(
    "--results",
    default="results",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Results directory holding harness.sqlite.",
)


def format_options(f):
    f = click.option("--csv", "fmt", flag_value="csv", help="Print CSV.")(f)
    f = click.option("--json", "fmt", flag_value="json", help="Print JSON.")(f)
    return f


@click.group()
def cli() -> None:
    """List, show and export stored runs."""


@cli.command("list")
@results_option
@format_options
@click.option("--method", default=None, help="Only runs of this method.")
def list_cmd(results: str, fmt: str | None, method: str | None) -> None:
    """One line per run: method, LLM, seed, status, ops finished, valid candidates."""
    from harness.store.export import run_summary, to_csv

    repo = open_results(results)
    runs = repo.list_runs(method=method)
    rows = [run_summary(repo, r.run_id) for r in runs]
    orphans = 0
    for run, r in zip(runs, rows, strict=True):  # out of every op of the run, begun or not (issue 26)
        r["ops_total"] = max(len(run.config.get("ops") or []), r["ops"])
        if run.status == "running":  # store/runlock.py: a process runs it now, or it ended unfinished
            from harness.store.runlock import holder

            live = holder(repo.store.dir, run.run_id)
            r["process"] = live.describe() if live else None
            if live is None:
                r["status"], orphans = "running (no process)", orphans + 1
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
    elif fmt == "csv":
        click.echo(to_csv(rows), nl=False)
    elif not rows:
        click.echo(f"no runs in {repo.path}")
    else:
        cols = ["run_id", "method", "variant", "llm", "seed", "device", "status"]
        for r in rows:
            r["ops done"] = f"{r['ops_finished']}/{r['ops_total']}"
            r["valid/cands"] = f"{r['valid']}/{r['candidates']}"
        click.echo(format_table(rows, [*cols, "ops done", "valid/cands", "created_at"]))
        if orphans:
            click.echo("\nrunning (no process): no process runs it now; it ended without finishing (a crash, a "
                       "kill -9, a lost machine). `harness runs show RUN_ID` prints the command that resumes it")


@cli.command("show")
@click.argument("run_id")
@results_option
@format_options
def show_cmd(run_id: str, results: str, fmt: str | None) -> None:
    """A run's settings and a per-op table (trials, valid, final speedups with CIs)."""
    from harness.store.export import op_rows, run_summary, to_csv

    repo = open_results(results)
    run = repo.get_run(run_id)
    if run is None:
        known = ", ".join(r.run_id for r in repo.list_runs()[-5:]) or "none"
        raise click.ClickException(f"no run {run_id!r} in {repo.path} (latest: {known})")
    ops = op_rows(repo, run_id)
    if fmt == "json":
        doc = {"run": run.to_dict(), "ops": ops, **recorded_settings(run.config)}
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    if fmt == "csv":
        flat = [
            {
                **o,
                **{
                    f"speedup_{b}": (o[f"speedup_{b}"] or {}).get("value")
                    for b in ("eager", "compile")
                },
            }
            for o in ops
        ]
        click.echo(to_csv(flat), nl=False)
        return
    s = run_summary(repo, run_id)
    for k in ("run_id", "method", "variant", "llm", "seed", "device", "status", "created_at"):
        click.echo(f"{k:>12}: {s[k]}")
    click.echo(f"{'budget':>12}: {json.dumps(run.budget)}")
    click.echo(f"{'git_commit':>12}: {run.git_commit or '-'}")
    for key, value in recorded_settings(run.config).items():
        if value:
            click.echo(f"{key:>12}: {json.dumps(value, sort_keys=True, default=str)}")
    if run.error:
        click.echo(f"{'error':>12}: {run.error}")
    resume, live = resume_hint(run), None
    if run.status == "running":  # store/runlock.py: is a process running it now?
        from harness.store.runlock import holder

        live = holder(repo.store.dir, run_id)
        if live is not None:
            click.echo(f"{'':>12}  being run now by {live.describe()}")
        else:
            click.echo(f"{'':>12}  no process holds it: it ended without finishing (a crash, a kill -9, a lost "
                       "machine); resume it with the command below")
    if run.device == "cpu":
        click.echo("note: CPU host timers: numbers are for tests only, never leaderboard results")
    click.echo("")
    cols = ["op", "status", "trials", "valid", "final_status", "speedup_eager", "speedup_compile",
            "speedup_vs_seed"]
    click.echo(format_table(ops, cols) if ops else "(no ops recorded)")
    notes = op_errors_text(ops, run.config.get("ops") or [], resume, running=live.describe() if live else None)
    if notes:
        click.echo(notes)


@cli.command("export")
@click.argument("run_ids", nargs=-1)
@results_option
@format_options
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None, help="Write here, not stdout."
)
def export_cmd(run_ids: tuple[str, ...], results: str, fmt: str | None, out: str | None) -> None:
    """Export runs (all when none named): JSON (runs, ops, candidates, verdicts) or CSV (one row
    per verdict)."""
    from harness.store.export import export_csv, export_json

    repo = open_results(results)
    ids = list(run_ids) or [r.run_id for r in repo.list_runs()]
    missing = [r for r in ids if repo.get_run(r) is None]
    if missing:
        raise click.ClickException(f"no run(s) {', '.join(missing)} in {repo.path}")
    text = export_csv(repo, ids) if fmt == "csv" else export_json(repo, ids) + "\n"
    if out:
        Path(out).write_text(text)
        click.echo(f"wrote {len(ids)} run(s) to {out}", err=True)
    else:
        sys.stdout.write(text)


def resume_hint(run: Any) -> str:
    """The command that resumes ``run`` (from the command line it recorded), or how to make it."""
    from harness.runner.stop import resume_command

    command = run.config.get("command")
    if not command:
        return f"rerun the run's `harness run` command with --run-id {run.run_id}"
    multi = any(a == "--seeds" or a.startswith("--seeds=") for a in command)
    return resume_command(command, run.run_id, seed=run.seed if multi else None)


def op_errors_text(ops: list[dict[str, Any]], planned: list[str], resume: str = "",
                   running: str | None = None) -> str:
    """Below the table: each op's error in full, the ops not finished, and how to resume ("" if none);
    ``running``: the process running it now (then there is nothing to resume)."""
    lines = [f"{o['op']} ({o['status']}): {o['error'].strip()}" for o in ops if o.get("error")]
    out = ("\nerrors:\n" + "\n".join(lines)) if lines else ""
    status = {o["op"]: o["status"] for o in ops}
    waiting = [op for op in (planned or list(status)) if status.get(op) != "finished"]
    if waiting and running:
        out += f"\nnot finished yet: {', '.join(waiting)}; being run now by {running}"
    elif waiting:
        out += (f"\nnot finished: {', '.join(waiting)}; resume (finished ops are skipped, nothing is judged "
                f"twice): {resume or 'rerun its `harness run` command with --run-id'}")
    return out


SETTINGS_KEYS = ("method_settings", "llm_settings", "prompt_hashes", "seed_kernels")


def recorded_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The settings a run recorded (issue 30); {} for each that a run before it lacks."""
    return {k: config.get(k) or {} for k in SETTINGS_KEYS}
