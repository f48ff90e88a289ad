"""``bash scripts/demo.sh`` is resumable to the end (issue 26, item 6), run as a user runs it and
stopped with Ctrl-C (SIGINT to its whole process group, as a terminal sends it).

Stopped once its first op (relu) is finished, the script still builds the leaderboard from that op
and ends with one line saying how to continue (the run's exit status, 130); run again, it continues
the same run (relu skipped, not judged again). The run is shortened with extra arguments, which
the script passes to `harness run` (budget 1, no seed kernel, the fast timing caps); its results
and site go to a temporary folder (DEMO_RESULTS, DEMO_SITE)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import REPO
from tests.support.evalconfig import FAST_EVAL_OPTIONS

pytestmark = pytest.mark.slow

SHORT = ["--budget", "1", "--seed-kernels", "none", *FAST_EVAL_OPTIONS]
CONTINUE = ("demo: run demo-evoengineer stopped (exit 130); run `bash scripts/demo.sh` again to continue it "
            "where it stopped")


def demo(tmp: Path) -> subprocess.Popen:
    env = {**os.environ, "DEMO_RESULTS": str(tmp / "results"), "DEMO_SITE": str(tmp / "site")}
    return subprocess.Popen(["bash", "scripts/demo.sh", *SHORT], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def ops(tmp: Path) -> dict[str, str]:
    try:
        con = sqlite3.connect(tmp / "results" / "harness.sqlite", timeout=5)
        try:
            return dict(con.execute("SELECT op, status FROM run_ops WHERE run_id='demo-evoengineer'").fetchall())
        finally:
            con.close()
    except sqlite3.OperationalError:
        return {}


def ctrl_c_when(p: subprocess.Popen, ready, timeout: float = 900) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline and p.poll() is None and not ready():
        time.sleep(1)
    assert p.poll() is None, "the demo ended before it could be stopped"
    os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
    return p.communicate(timeout=600)[0]


def test_demo_stopped_with_ctrl_c_builds_the_leaderboard_and_continues_the_same_run(tmp_path):
    p = demo(tmp_path)
    out = ctrl_c_when(p, lambda: ops(tmp_path).get("relu") == "finished")
    assert p.returncode == 130, out
    assert "Traceback" not in out and "Aborted!" not in out
    assert out.strip().splitlines()[-1] == CONTINUE, out
    assert "harness: run demo-evoengineer interrupted by SIGINT (Ctrl-C); stored as interrupted" in out
    assert (tmp_path / "site" / "index.html").is_file()  # the leaderboard of the ops finished so far
    assert "demo: leaderboard at" in out
    # again: the same run goes on where it stopped (relu is not judged again)
    con = sqlite3.connect(tmp_path / "results" / "harness.sqlite")
    relu_verdicts = con.execute("SELECT COUNT(*) FROM verdicts WHERE op='relu'").fetchone()[0]
    con.close()
    p = demo(tmp_path)
    out = ctrl_c_when(p, lambda: len([s for s in ops(tmp_path).values() if s == "searching"]) > 0)
    assert "relu: already finished (resumed run), skipped" in out, out
    assert p.returncode == 130 and out.strip().splitlines()[-1] == CONTINUE, out
    con = sqlite3.connect(tmp_path / "results" / "harness.sqlite")
    try:
        assert con.execute("SELECT run_id, status FROM runs").fetchall() == [("demo-evoengineer", "interrupted")]
        assert con.execute("SELECT COUNT(*) FROM verdicts WHERE op='relu'").fetchone()[0] == relu_verdicts
    finally:
        con.close()
