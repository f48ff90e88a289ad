"""The README's commands exist as written (issue 26: where the README promises something, a test
checks it): every ``harness ...`` line of its bash blocks names a real command and only options
that command takes, and ``scripts/demo.sh`` runs the command the README describes. What the
commands do is tested where each lives (e.g. ``--set``: tests/suite/test_task_size.py; resume after
Ctrl-C: tests/runner/test_interrupt.py; the demo's resume: tests/runner/test_demo_script.py)."""

from __future__ import annotations

import re

import click
import pytest

from harness.cli import main
from tests.support.cli import REPO

README = (REPO / "README.md").read_text()


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    out = []
    for line in "\n".join(blocks).splitlines():
        for part in line.split("#", 1)[0].split("&&"):
            part = part.strip()
            if part.startswith("harness "):
                out.append(part)
    return out


def resolve(words: list[str]) -> tuple[click.Command, list[str]]:
    """(the click command the words name, the words after its name)."""
    cmd: click.Command = main
    ctx = click.Context(main)
    while words and isinstance(cmd, click.Group):
        sub = cmd.get_command(ctx, words[0])
        assert sub is not None, f"no command {words[0]!r} in `harness {cmd.name}`"
        cmd, words = sub, words[1:]
    return cmd, words


@pytest.mark.parametrize("line", readme_commands())
def test_each_readme_command_exists_with_its_options(line):
    cmd, rest = resolve(line.split()[1:])
    known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    used = {w.split("=", 1)[0] for w in rest if w.startswith("--")}
    assert used <= known, f"{line}: {sorted(used - known)} not options of `{cmd.name}`"


def test_the_readme_lists_the_new_commands_and_states_the_demo_time():
    commands = readme_commands()
    assert any("--set batch_size=16 --set dim=16384" in c for c in commands)
    assert re.search(r"Measured: \d+ minutes on the 2-core test box", " ".join(README.split()))
    demo = (REPO / "scripts" / "demo.sh").read_text()
    assert "--method evoengineer --llm offline --suite smoke --device cpu --budget 6" in demo
    assert "--run-id demo-evoengineer" in demo  # a rerun continues the same run (README: resumable)
