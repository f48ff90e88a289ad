"""End to end, through the CLI with the real sandboxed evaluator on the CPU and the offline
model: `harness run` completes for each of F1's methods with results in SQLite, and a run
killed with SIGKILL halfway (after its first of two ops) resumes under the same run id without
repeating the finished op.

Slow (C++ compiles: the offline model keeps each op's C++ source identical, so the
evaluator's build cache compiles each op once). evoengineer-free's run is the session's shared
offline relu run (tests/support/offline_run.py). Timing is shortened with --eval-option
(tests/support/evalconfig.py): CPU numbers are pipeline checks, never leaderboard numbers."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import harness_popen
from tests.support.evalconfig import FAST_EVAL_OPTIONS
from tests.support.offline_run import METHOD as SHARED_METHOD

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return tmp_path_factory.mktemp("e2e-results")


def harness_run(results: Path, *args: str) -> subprocess.Popen:
    return harness_popen("run", "--llm", "offline", "--device", "cpu", "--results", results, "--quiet",
                         *FAST_EVAL_OPTIONS, *args)


def query(results: Path, sql: str, *params):
    con = sqlite3.connect(results / "harness.sqlite", timeout=60)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("method", ["evoengineer-free", "evoengineer-insight", "one-shot", "best-of-n"])
def test_each_method_completes_with_results_in_sqlite(results, method, offline_relu_run):
    if method == SHARED_METHOD:  # the session's run: the same command, with the local executor
        results, run_id, rc, out = (offline_relu_run.results, offline_relu_run.run_id, offline_relu_run.returncode,
                                    offline_relu_run.output)
    else:
        run_id = f"e2e-{method}"
        p = harness_run(results, "--method", method, "--ops", "relu", "--budget", "3", "--run-id", run_id)
        out, _ = p.communicate(timeout=1500)
        rc = p.returncode
    assert rc == 0, out
    assert "relu" in out and "valid/total" in out
    expected = 1 if method == "one-shot" else 3
    # trial -1 is relu's seed kernel (EvoEngineer starts from it; the runner judges it, uncharged)
    assert query(results, "SELECT COUNT(*) FROM candidates WHERE run_id=? AND trial >= 0", run_id)[0][0] == expected
    assert query(results, "SELECT COUNT(*) FROM verdicts v JOIN candidates c ON c.candidate_id = v.candidate_id "
                 "WHERE v.run_id=? AND v.mode='feedback' AND c.trial >= 0", run_id)[0][0] == expected
    seeds = query(results, "SELECT COUNT(*) FROM candidates WHERE run_id=? AND trial = -1", run_id)[0][0]
    assert seeds == (1 if method.startswith("evoengineer") else 0)
    if seeds:  # the shipped C++ seed, judged by the real evaluator like any candidate
        assert query(results, "SELECT v.status FROM verdicts v JOIN candidates c ON c.candidate_id = "
                     "v.candidate_id WHERE v.run_id=? AND c.trial = -1 AND v.mode='feedback'",
                     run_id)[0][0] == "valid"
    assert query(results, "SELECT status FROM runs WHERE run_id=?", run_id)[0][0] == "finished"
    assert query(results, "SELECT status FROM run_ops WHERE run_id=?", run_id)[0][0] == "finished"
    assert query(results, "SELECT COUNT(*) FROM llm_calls WHERE run_id=? AND offline=1", run_id)[0][0] >= expected


def test_evoengineer_killed_halfway_resumes_without_repeating_a_finished_op(results):
    """Two ops, run one after the other (--jobs 1): killed once relu is finished, softmax under way."""
    run_id = "e2e-kill"
    args = ["--method", "evoengineer", "--ops", "relu,softmax", "--budget", "3", "--run-id", run_id,
            "--seed-kernels", "none"]  # resume is under test here; seeds would add C++ builds
    p = harness_run(results, *args)
    deadline = time.time() + 1500
    finished: list[str] = []
    while time.time() < deadline and p.poll() is None:
        time.sleep(2)
        try:
            finished = [r[0] for r in query(results, "SELECT op FROM run_ops WHERE run_id=? AND status='finished'", run_id)]
        except sqlite3.OperationalError:
            continue
        if finished:
            break
    assert finished and p.poll() is None, "the run ended before it could be killed halfway"
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    before = {op: query(results, "SELECT verdict_id FROM verdicts WHERE run_id=? AND op=? ORDER BY verdict_id",
                        run_id, op) for op in finished}
    p2 = harness_run(results, *args)
    out, _ = p2.communicate(timeout=2400)
    assert p2.returncode in (0, 1), out  # 1 = some op failed (then the table says why)
    ops = dict(query(results, "SELECT op, status FROM run_ops WHERE run_id=?", run_id))
    assert set(ops) == {"relu", "softmax"}
    assert set(ops.values()) == {"finished"}, out
    for op in ops:  # three trials per op, each judged once in feedback mode
        assert query(results, "SELECT COUNT(*) FROM candidates WHERE run_id=? AND op=?", run_id, op)[0][0] == 3
        assert query(results, "SELECT COUNT(*) FROM verdicts WHERE run_id=? AND op=? AND mode='feedback'",
                     run_id, op)[0][0] == 3
        assert query(results, "SELECT COUNT(*) FROM verdicts WHERE run_id=? AND op=? AND mode='final'",
                     run_id, op)[0][0] <= 1
    for op, ids in before.items():  # a finished op was not touched again
        assert query(results, "SELECT verdict_id FROM verdicts WHERE run_id=? AND op=? ORDER BY verdict_id",
                     run_id, op) == ids
    assert "(earlier)" in out
