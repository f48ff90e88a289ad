"""``harness methods list``: the optimizers the harness can run (name, variant, paper, budget)."""

from __future__ import annotations

import json

import click


@click.group("methods")
def cli() -> None:
    """List the optimizers (built-ins, installed plugins, submission folders)."""


@cli.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_cmd(as_json: bool) -> None:
    """Name, variant, paper and default budget of every method."""
    from harness.methods.registry import list_methods

    infos = list_methods()
    if as_json:
        click.echo(json.dumps([i.to_dict() for i in infos], indent=2))
        return
    rows = [("name", "variant", "default budget", "paper / source")]
    for i in infos:
        paper = i.paper or i.source
        if i.source == "alias":
            paper = f"alias {i.target}"
        if i.error:
            paper = f"(unavailable: {i.error})"
        rows.append((i.name, i.variant or "-", str(i.default_budget or "-"), paper))
    widths = [max(len(r[c]) for r in rows) for c in range(3)]
    for n, r in enumerate(rows):
        click.echo("  ".join(r[c].ljust(widths[c]) for c in range(3)) + "  " + r[3])
        if n == 0:
            click.echo("  ".join("-" * w for w in widths) + "  " + "-" * 14)
