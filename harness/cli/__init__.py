"""The ``harness`` command. Each subcommand lives in its own module and is imported lazily,
so ``harness --help`` stays fast and a broken optional dependency only breaks its command."""

from __future__ import annotations

import importlib

import click

from harness import __version__

# name -> (module, short help). Each module defines a click command or group called ``cli``.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("harness.cli.run", "Run an optimizer (method) over the op suite."),
    "eval": ("harness.cli.eval", "Judge one candidate kernel against one reference op."),
    "eval-batch": ("harness.cli.eval_batch", "Judge many (reference, candidate) pairs, resumably."),
    "suite": ("harness.cli.suite", "List and inspect the reference op suite."),
    "leaderboard": ("harness.cli.leaderboard", "Build, serve and verify the static leaderboard."),
    "submit": ("harness.cli.submit", "Scaffold and validate a method submission."),
    "methods": ("harness.cli.methods", "List the optimizers the harness can run."),
    "runs": ("harness.cli.runs", "List, show and export stored runs."),
    "llm": ("harness.cli.llm", "Check and configure the LLM endpoint."),
    "doctor": ("harness.cli.doctor", "Say what this machine can do (GPU, nvcc, sandboxes)."),
}


class LazyGroup(click.Group):
    def invoke(self, ctx: click.Context) -> object:
        """Errors a user fixes (harness/usererror.py) as one line and exit 2, never a traceback."""
        from harness.usererror import UserError, path_message

        try:
            return super().invoke(ctx)
        except UserError as e:
            click.echo(f"harness: {e}", err=True)
            ctx.exit(2)
        except OSError as e:
            msg = path_message(e)
            if msg is None:
                raise
            click.echo(f"harness: {msg}", err=True)
            ctx.exit(2)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Keep the command line as given (``harness run`` prints it back as the resume command)."""
        ctx.meta["harness.argv"] = list(args)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[name][0])
        return module.cli

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _stack_dumps() -> None:
    """``KH_DUMP_STACKS=1``: SIGUSR1 prints every thread's stack to stderr (faulthandler) and the
    process goes on; how a run that seems stuck is looked into (harness/bench/tools/gpu_methods_slice.sh sends
    it before its deadline's SIGTERM). Off by default: SIGUSR1 keeps its default action."""
    import os

    if os.environ.get("KH_DUMP_STACKS") == "1":
        import faulthandler
        import signal

        faulthandler.register(signal.SIGUSR1, all_threads=True)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
def main() -> None:
    """Compare LLM-driven GPU kernel optimizers on one op suite, under one set of rules.

    \b
    Quick start (CPU, no API key):
      harness doctor
      harness suite list
      harness run --method evoengineer --llm offline --suite smoke --device cpu
      harness leaderboard build --results results --out site/_build
    """
    _stack_dumps()
