"""A results store that cannot be used gives one line naming the path and what to do, exit 2,
no traceback, and is never overwritten (issue 26, item 3). Each command runs as a user runs it:
the installed ``harness`` in a child process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.store.fill_store import fill

GARBAGE = b"this is not a database, it is someone's notes\n" * 10


def harness(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          timeout=timeout)


def assert_one_line(p: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr + p.stdout
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, p.stderr
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize("command", [
    ["runs", "list", "--results", "{dir}"],
    ["leaderboard", "build", "--results", "{dir}", "--out", "{tmp}/site"],
    ["run", "--method", "best-of-n", "--llm", "offline", "--ops", "relu", "--device", "cpu", "--budget", "1",
     "--results", "{dir}"],
], ids=["runs-list", "leaderboard-build", "run"])
def test_a_store_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path: Path, command: list[str]) -> None:
    d = tmp_path / "results"
    d.mkdir()
    db = d / "harness.sqlite"
    db.write_bytes(GARBAGE)
    p = harness(*[c.format(dir=d, tmp=tmp_path) for c in command])
    assert_one_line(p, str(db), "not a SQLite results store")
    assert db.read_bytes() == GARBAGE  # never overwritten
    assert not (d / "harness.sqlite-wal").exists()


def test_results_folder_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    p = harness("run", "--method", "best-of-n", "--llm", "offline", "--ops", "relu", "--device", "cpu",
                "--budget", "1", "--results", str(blocker / "results"))
    assert_one_line(p, str(blocker / "results"), "--results")


def test_site_folder_that_cannot_be_written(tmp_path: Path) -> None:
    fill(tmp_path / "results", ops=["relu"])
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    p = harness("leaderboard", "build", "--results", str(tmp_path / "results"), "--out", str(blocker / "site"))
    assert_one_line(p, str(blocker / "site"))
