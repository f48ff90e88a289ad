"""``harness suite``: list and inspect reference ops (bundled suite or any KernelBench files)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from harness.suite.suites import SuiteError, find_task, load_suites, resolve
from sandbox.contract import Task, TaskError


def _fail(e: Exception) -> None:
    click.echo(f"error: {e}", err=True)
    sys.exit(2)


def _work(task: Task, profile: str = "default") -> tuple[float | None, float | None, str | None]:
    try:
        flops, nbytes = task.work(profile)
        return flops, nbytes, None
    except Exception as e:  # a KernelBench file whose globals fail to evaluate: show, do not die
        return None, None, f"{type(e).__name__}: {e}"


def task_summary(task: Task) -> dict[str, Any]:
    """One row of ``suite list --json`` (also used by other commands that list ops)."""
    flops, nbytes, err = _work(task)
    row = {
        "name": task.name,
        "category": task.meta.category,
        "dtype": task.meta.dtype,
        "atol": task.meta.atol,
        "rtol": task.meta.rtol,
        "flops": task.meta.flops,
        "bytes": task.meta.bytes,
        "gflop": None if flops is None else flops / 1e9,
        "mb": None if nbytes is None else nbytes / 1e6,
        "profiles": task.profiles,
        "extra_profiles": task.extra_profiles,
        "description": task.meta.description,
        "kernelbench": task.kernelbench,
        "path": str(task.path),
        "sha256": task.sha256,
    }
    if err:
        row["error"] = err
    return row


def _num(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    return "\n".join(lines)


@click.group()
def cli() -> None:
    """List and inspect the reference op suite (or any KernelBench task files).

    \b
    harness suite list                     every bundled op
    harness suite list --suite smoke       one named suite
    harness suite list path/to/KernelBench/level1
    harness suite show relu                metadata, shapes per profile, source
    harness suite suites                   the named suites
    harness suite check                    trivial outputs must fail every op
    harness suite lint                     tasks whose output ignores its inputs (task.degenerate)
    """


@cli.command("list")
@click.argument("spec", required=False)
@click.option("--suite", "suite", default=None, help="A named suite (smoke, level1, level2, full).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_cmd(spec: str | None, suite: str | None, as_json: bool) -> None:
    """List ops: all bundled ones, a suite, op names, or a KernelBench file/folder (SPEC)."""
    if spec and suite:
        _fail(SuiteError("give either --suite or a SPEC argument, not both"))
    try:
        tasks = resolve(spec or suite or "full")
    except TaskError as e:
        _fail(e)
    rows = [task_summary(t) for t in tasks]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = [
        [
            r["name"],
            r["category"],
            r["dtype"],
            f"{r['atol']:g}/{r['rtol']:g}",
            _num(r["gflop"], ".2f"),
            _num(r["mb"], ".1f"),
            ",".join(r["profiles"]),
        ]
        for r in rows
    ]
    click.echo(_table(table, ["name", "category", "dtype", "atol/rtol", "GFLOP", "MB", "profiles"]))
    click.echo(f"\n{len(rows)} op(s); GFLOP and MB (minimum bytes moved) at the default profile.")


@cli.command("show")
@click.argument("op")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--no-source", is_flag=True, help="Leave out the source text.")
def show_cmd(op: str, as_json: bool, no_source: bool) -> None:
    """Show one op (name or task file): metadata, shapes per profile with FLOPs/bytes, source."""
    try:
        task = find_task(op)
    except TaskError as e:
        _fail(e)
    info = task_summary(task)
    profiles = []
    for prof in task.profiles:
        flops, nbytes, err = _work(task, prof)
        try:
            glob = task.shape_globals(prof)
        except Exception as e:  # noqa: BLE001 - report, do not crash
            glob, err = {}, f"{type(e).__name__}: {e}"
        profiles.append(
            {
                "profile": prof,
                "overrides": task.shapes.get(prof, {}),
                "globals": glob,
                "gflop": None if flops is None else flops / 1e9,
                "mb": None if nbytes is None else nbytes / 1e6,
                **({"error": err} if err else {}),
            }
        )
    info["shapes"] = profiles
    if not no_source:
        info["source"] = task.source
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"{task.name}  ({task.path})")
    for k in ("category", "dtype", "atol", "rtol", "flops", "bytes", "description"):
        click.echo(f"  {k:<12} {info[k]}")
    if task.kernelbench:
        click.echo(
            "  (plain KernelBench task: no META/SHAPES; default tolerance and no extra shapes)"
        )
    click.echo("")
    table = [
        [
            p["profile"],
            " ".join(f"{k}={v}" for k, v in p["globals"].items()),
            _num(p["gflop"], ".3f"),
            _num(p["mb"], ".2f"),
        ]
        for p in profiles
    ]
    click.echo(_table(table, ["profile", "shape globals", "GFLOP", "MB"]))
    if not no_source:
        click.echo("\n" + task.source)


@cli.command("suites")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def suites_cmd(as_json: bool) -> None:
    """List the named suites and how many ops each has."""
    try:
        defs = load_suites()
        rows = [
            {"name": n, "description": d.description, "ops": [t.name for t in resolve(n)]}
            for n, d in defs.items()
        ]
    except TaskError as e:
        _fail(e)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    click.echo(
        _table(
            [[r["name"], str(len(r["ops"])), r["description"]] for r in rows],
            ["suite", "ops", "description"],
        )
    )


@cli.command("check")
@click.argument("spec", default="full")
@click.option(
    "--profile",
    default="small",
    show_default=True,
    help="Base profile; its extra profiles are checked too.",
)
def check_cmd(spec: str, profile: str) -> None:
    """Run each op's reference on CPU and prove trivial outputs (zeros, constants, echo) fail."""
    from harness.suite.checks import discriminative_failures

    try:
        tasks = resolve(spec)
    except TaskError as e:
        _fail(e)
    bad = 0
    for t in tasks:
        profs = [profile, *t.extra_profiles_for(profile)] if profile in t.profiles else ["default"]
        for prof in profs:
            try:
                fails = discriminative_failures(t, prof)
                msg = "ok" if not fails else "NOT DISCRIMINATIVE: " + ", ".join(fails) + " pass(es)"
            except Exception as e:  # noqa: BLE001 - a broken op is reported, others still run
                fails, msg = ["error"], f"ERROR {type(e).__name__}: {e}"
            bad += bool(fails)
            click.echo(f"{t.name:<32} {prof:<14} {msg}")
    sys.exit(1 if bad else 0)


@cli.command("lint")
@click.argument("spec", default="full")
@click.option("--device", default="cpu", show_default=True, help="cpu | cuda | cuda:N: where the references run.")
@click.option("--profile", default=None,
              help="Shape profile where a task has it (default: the one a judgement on DEVICE uses: "
              "small on a CPU when the task has it).")
@click.option("--sandbox", type=click.Choice(["process", "docker"]), default="process", show_default=True)
@click.option("--all", "show_all", is_flag=True, help="A line for every task, not only the degenerate ones.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (every task).")
def lint_cmd(spec: str, device: str, profile: str | None, sandbox: str, show_all: bool, as_json: bool) -> None:
    """The task check task.degenerate over SPEC (ops, a suite, KernelBench files or folders): each
    task whose reference output does not change beyond its tolerance when its inputs and weights
    are redrawn, with the evidence. Such a task passes any output near its own; `harness eval`,
    `eval-batch` and `run` refuse it unless --allow-degenerate. Exit 1 when any task is degenerate
    or its reference fails, 2 for unusable arguments."""
    from harness.suite.checks import lint
    from sandbox.contract import SandboxUnavailable

    try:
        tasks = resolve(spec)
        results = lint(tasks, device, profile, sandbox)
    except (TaskError, SandboxUnavailable) as e:
        _fail(e)
    if as_json:
        click.echo(json.dumps([{**r.to_dict(), "cached": r.cached, "evidence": r.evidence()} for r in results],
                              indent=2))
    else:
        for r in results:
            state = {True: "DEGENERATE", False: "ok", None: "ERROR"}[r.degenerate]
            if show_all or r.degenerate is not False:
                click.echo(f"{state:<10}  {r.task:<32} {r.profile:<8} {r.evidence()}  ({r.path})")
    bad = sum(r.degenerate is True for r in results)
    undecided = sum(r.degenerate is None for r in results)
    if not as_json:
        kept = sum(r.cached for r in results)
        click.echo(f"{len(results)} task(s) checked on {device} ({kept} answer(s) kept from earlier checks): "
                   f"{bad} degenerate, {undecided} undecided (reference failed)")
    sys.exit(1 if bad or undecided else 0)
