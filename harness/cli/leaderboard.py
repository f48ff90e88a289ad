"""``harness leaderboard build/serve/verify``: the static leaderboard site."""

from __future__ import annotations

import functools
import http.server
import json
import sys
from pathlib import Path

import click


@click.group()
def cli() -> None:
    """Build, serve and verify the static leaderboard."""


@cli.command("build")
@click.option(
    "--results", "results", multiple=True, type=click.Path(file_okay=False),
    help="Results directory (repeatable); default: ./results.",
)  # fmt: skip
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option("--finished-only", is_flag=True, help="Leave out runs that are still running.")
def build_cmd(results: tuple[str, ...], out: str, finished_only: bool) -> None:
    """Aggregate every run of every store into OUT/leaderboard.json, then render OUT/*.html."""
    from harness.leaderboard.build import build_leaderboard
    from harness.leaderboard.collect import NoResults, collect
    from harness.leaderboard.render import render_site

    dirs = list(results) or ["results"]
    try:
        runs = collect(dirs, include_running=not finished_only)
    except NoResults as e:
        raise click.ClickException(str(e)) from e
    if not runs:
        raise click.ClickException(
            f"no run with a finished op in {', '.join(dirs)}; run `harness run ...` first"
        )
    lb = build_leaderboard(runs, dirs)
    evidence = {(r.run.run_id, op): v for r in runs for op, v in r.evidence.items()}
    pages = render_site(lb, out, evidence=evidence)
    click.echo(
        f"leaderboard: {len(lb.entries)} entries, {len(lb.ops)} ops, {len(runs)} runs -> "
        f"{Path(out) / 'leaderboard.json'} and {len(pages)} pages; open {Path(out) / 'index.html'}"
    )
    for t in lb.tables:
        if t.rows or t.unranked:
            click.echo(f"  table {t.table_id}: {len(t.rows)} ranked, {len(t.unranked)} not ranked: {t.title}")
    for e in lb.entries:
        if e.badges:
            click.echo(f"  note: {e.label}: {'; '.join(e.badges)}")
    if len(lb.entries) > 1 and not lb.pairwise:
        click.echo("  note: no two entries are compared: entries are compared only inside one table (the same "
                   "--suite or --ops, task files, device and rules), each with every op of it finished; run "
                   "the methods with the same --suite and --device and let them finish (resume with --run-id)")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        sys.stderr.write("serve: " + (format % args) + "\n")


@cli.command("serve")
@click.option("--dir", "directory", default="site/_build", show_default=True,
              type=click.Path(file_okay=False, exists=True), help="A built site.")  # fmt: skip
@click.option("--port", default=8000, show_default=True, type=int, help="0 picks a free port.")
def serve_cmd(directory: str, port: int) -> None:
    """Preview a built site on http://127.0.0.1:PORT (loopback only; Ctrl-C stops)."""
    if not (Path(directory) / "index.html").is_file():
        raise click.ClickException(
            f"{directory}/index.html missing; run `harness leaderboard build` first"
        )
    handler = functools.partial(_QuietHandler, directory=directory)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as srv:
        click.echo(
            f"serving {directory} at http://127.0.0.1:{srv.server_address[1]}/ (Ctrl-C stops)",
            err=True,
        )
        try:
            srv.serve_forever()
        except KeyboardInterrupt:
            pass


@cli.command("verify")
@click.option("--results", "results", multiple=True, type=click.Path(file_okay=False),
              help="Results directory (repeatable).")  # fmt: skip
@click.option("--leaderboard", "lb_path", type=click.Path(dir_okay=False, exists=True),
              help="A leaderboard.json (instead of --results).")  # fmt: skip
@click.option("--device", default=None, help="cuda | cpu (default: each kernel's recorded device).")
@click.option("--sandbox", default="process", show_default=True, help="process | docker.")
@click.option("--entry", "entries", multiple=True, help="Only these entry ids (repeatable).")
@click.option("--op", "ops", multiple=True, help="Only these ops (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Re-judge at most N rows (in ranking order).")  # fmt: skip
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Rows re-judged at once (each row's sessions one after the other).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify_cmd(results, lb_path, device, sandbox, entries, ops, limit, jobs, as_json) -> None:
    """Re-judge published rows on this machine (final mode, as many judging sessions as each
    number was measured in) and say for each whether the new speedup falls in its published
    95% interval. Exits 1 when fewer hold than that level implies: P(Binomial(n, 0.95) <= held)
    <= 0.05 (of 10 rows at least 8 must hold; of 3, 2; of 1, 1), or when a kernel errs."""
    from harness.leaderboard.collect import NoResults
    from harness.leaderboard.model import LeaderboardError
    from harness.leaderboard.verify import load_leaderboard, verify

    if device is not None:
        from harness.env.devices import resolve_device

        device = resolve_device(device)
    try:
        lb = load_leaderboard(list(results), lb_path)
    except (NoResults, LeaderboardError, ValueError) as e:
        raise click.UsageError(f"{lb_path or ', '.join(results) or 'results'}: {e}") from e
    known = {e.entry_id for e in lb.entries}
    unknown = sorted(set(entries) - known)
    if unknown:
        raise click.BadParameter(f"no entry {', '.join(unknown)}; entries: {', '.join(sorted(known))}",
                                 param_hint="--entry")  # fmt: skip
    report = verify(lb, device=device, sandbox=sandbox, entries=set(entries), ops=set(ops),
                    progress=lambda s: click.echo(s, err=True), limit=limit, jobs=jobs)  # fmt: skip
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(report.text())
    if report.errors or not report.passes:
        sys.exit(1)
