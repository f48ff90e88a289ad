"""``harness submit``: scaffold and validate a method submission (submissions/NAME/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click


@click.group("submit")
def cli() -> None:
    """Scaffold and validate a method submission (see CONTRIBUTING.md)."""


@cli.command("validate")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--no-import", is_flag=True, help="Static checks only; do not import the plugin.")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON.")
def validate_cmd(folder: Path, no_import: bool, as_json: bool) -> None:
    """Check FOLDER/submission.toml and its files; print every problem; exit 1 when any."""
    from harness.submissions.validate import validate_submission

    spec, problems = validate_submission(folder, import_plugin=not no_import)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "folder": str(folder),
                    "ok": not problems,
                    "kind": spec.kind if spec else None,
                    "problems": [p.__dict__ for p in problems],
                },
                indent=2,
            )
        )
    elif problems:
        click.echo(f"{folder}: {len(problems)} problem(s)", err=True)
        for p in problems:
            click.echo(f"  - {p.field}: {p.message}", err=True)
            click.echo(f"    fix: {p.fix}", err=True)
    else:
        what = (
            f"method entry {spec.entry}" if spec.kind == "method" else f"kernels in {spec.kernels}/"
        )
        click.echo(
            f"{folder}: OK ({spec.name}: {what}; budget {spec.budget_evaluations} evaluations/op)"
        )
        click.echo(
            f"next: harness run --method {spec.name} --llm offline --suite smoke --device cpu --budget 3"
        )
    sys.exit(1 if problems else 0)


@cli.command("new")
@click.argument("name")
@click.option(
    "--dir",
    "root",
    default="submissions",
    show_default=True,
    type=click.Path(path_type=Path),
    help="Where submission folders live.",
)
@click.option(
    "--kernels", is_flag=True, help="An evaluation-only entry (precomputed kernels/<op>.py)."
)
@click.option("--author", default=None, help="Author line (default: git config user.name).")
@click.option("--description", default=None,
              help="One or two sentences: what the method does differently (default: a placeholder "
                   "that `submit validate` refuses until you replace it).")
def new_cmd(name: str, root: Path, kernels: bool, author: str | None, description: str | None) -> None:
    """Create submissions/NAME/ with a manifest and a working plugin template."""
    from harness.submissions.scaffold import scaffold

    try:
        folder = scaffold(name, root, kernels=kernels, author=author or _git_author(), description=description)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"created {folder}/")
    for p in sorted(folder.rglob("*")):
        click.echo(f"  {p.relative_to(folder)}")
    click.echo(f"next: edit {folder}/submission.toml, then `harness submit validate {folder}`")


def _git_author() -> str:
    try:
        out = subprocess.run(
            ["git", "config", "user.name"], capture_output=True, text=True, timeout=5
        )
        return out.stdout.strip() or "Your Name"
    except (OSError, subprocess.SubprocessError):
        return "Your Name"
