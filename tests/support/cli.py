"""The harness CLI, in the test process and as a subprocess.

    invoke("suite", "list")          click's CliRunner on harness.cli.main: fast, output captured
    harness("run", "--llm", ...)     ``python -m harness ...`` from the repository root: a real
                                     process (exit codes, signals, what a user's shell sees)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

REPO = Path(__file__).resolve().parents[2]


def invoke(*args: Any, command: Any = None, catch_exceptions: bool = True, **kw: Any) -> Result:
    """``harness ARGS`` (or ``command ARGS``, another click command) in this process."""
    if command is None:
        from harness.cli import main as command
    return CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=catch_exceptions, **kw)


def harness(*args: Any, timeout: float = 900, **kw: Any) -> subprocess.CompletedProcess:
    """``python -m harness ARGS`` in a child process, cwd the repository root, output captured."""
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], cwd=kw.pop("cwd", REPO),
                          capture_output=True, text=True, timeout=timeout, **kw)


def harness_popen(*args: Any, **kw: Any) -> subprocess.Popen:
    """``python -m harness ARGS`` started in its own session (killable as a group), stdout+stderr piped."""
    return subprocess.Popen([sys.executable, "-m", "harness", *map(str, args)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, **kw)
