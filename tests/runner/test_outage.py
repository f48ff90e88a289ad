"""An LLM endpoint that stops answering mid-run (issue 26, item 4), through the CLI as a user runs
it: a real loopback OpenAI-compatible server (tests/llm/fake_openai.py) answering with the
offline model's kernels, closed after two answers; the real evaluator on the CPU.

The run must retry within its stated limit (docs/llm.md "Outages": max_retries, backoff), then stop
cleanly: exit 3, one line naming the cause and the resume command, no traceback; the op in flight
final-judges its valid kernel and keeps the full error (store and `harness runs show`). The endpoint
back on the same port, the printed command resumes the run to its end without judging a kernel
twice. One op keeps it cheap (one C++ build); ops not begun staying pending, and several ops in
flight, are tested with a fake judge in tests/runner/test_runner.py, `runs list`'s count out of
every op in tests/runner/test_interrupt.py.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
from pathlib import Path

import pytest

from harness.llm.base import CallContext
from harness.llm.offline import OfflineModel
from tests.llm.fake_openai import FakeOpenAI
from tests.support.cli import harness
from tests.support.evalconfig import FAST_EVAL_OPTIONS

pytestmark = pytest.mark.slow

KEY_ENV, KEY = "HARNESS_TEST_OUTAGE_KEY", "sk-test-outage"
STOPPED = re.compile(r"^harness: run (\S+) stopped: the LLM endpoint stopped answering: .+; the valid kernels "
                     r"found so far were final-judged; resume with: (harness run .+)$")


def serve_offline_kernels(srv: FakeOpenAI) -> None:
    """The server answers as the offline model, a valid C++ kernel per op: the same one for every
    request of an op (a fresh model each time), so each op builds one extension and a repeated
    kernel's verdict is reused (the test's cost is its protocol, not C++ builds)."""
    srv.reply = lambda body: OfflineModel(seed=3, device="cpu", broken_rate=0.0).chat(
        body["messages"], context=CallContext()).text


def query(results: Path, sql: str, *params) -> list[tuple]:
    con = sqlite3.connect(results / "harness.sqlite", timeout=60)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def test_an_llm_outage_stops_the_run_final_judges_what_was_found_and_resumes(tmp_path):
    results = tmp_path / "results"
    config = tmp_path / "llm.toml"  # the retry limit under test: 2 retries, 0.05 s then 0.1 s apart
    config.write_text("[llm]\ntimeout_s = 10\nmax_retries = 2\nbackoff_s = 0.05\nmax_backoff_s = 0.2\n")
    env = {**os.environ, KEY_ENV: KEY}
    with FakeOpenAI(key=KEY) as srv:
        serve_offline_kernels(srv)
        srv.stop_after(1)  # relu's first trial is answered; its second call finds no server
        port = srv.port
        r = harness("run", "--method", "best-of-n", "--llm", f"fake-model@{srv.url}", "--llm-api-key-env", KEY_ENV,
                    "--llm-config", config, "--ops", "relu", "--budget", "2", "--device", "cpu",
                    "--seed-kernels", "none", "--results", results, "--quiet", *FAST_EVAL_OPTIONS, env=env,
                    timeout=1200)
        answered = len(srv.requests)
    out = r.stdout + r.stderr
    assert r.returncode == 3, out
    assert "Traceback" not in out
    m = STOPPED.match(r.stderr.strip().splitlines()[-1])
    assert m, r.stderr
    run_id, resume = m.groups()
    assert answered == 1
    # the store: the run and the op in flight interrupted with the full error, the next op not begun
    status, error = query(results, "SELECT status, error FROM runs WHERE run_id=?", run_id)[0]
    assert status == "interrupted" and error.startswith("the LLM endpoint stopped answering")
    relu_status, relu_error, relu_final = query(
        results, "SELECT status, error, final_verdict_id FROM run_ops WHERE run_id=? AND op='relu'", run_id)[0]
    assert relu_status == "interrupted"
    assert "still failing after 3 attempts" in relu_error and "raise llm.max_retries" in relu_error  # in full
    fb = query(results, "SELECT status FROM verdicts WHERE run_id=? AND op='relu' AND mode='feedback'", run_id)
    assert fb == [("valid",)]
    assert relu_final is not None  # the valid kernels found before the outage got their final judgement
    assert query(results, "SELECT status FROM verdicts WHERE verdict_id=?", relu_final)[0][0] == "valid"
    # what a user reads: runs show has the whole error per op and what is left, runs list the status
    show = harness("runs", "show", run_id, "--results", results)
    assert show.returncode == 0 and "Traceback" not in show.stdout + show.stderr
    assert f"relu (interrupted): {relu_error.strip()}" in show.stdout
    assert f"not finished: relu; resume (finished ops are skipped, nothing is judged twice): {resume}" in show.stdout
    listed = [ln for ln in harness("runs", "list", "--results", results).stdout.splitlines() if ln.startswith(run_id)]
    assert len(listed) == 1 and " interrupted " in listed[0] and " 0/1 " in listed[0], listed
    # the endpoint back, the printed command resumes the run to its end; nothing judged twice
    argv = shlex.split(resume)
    assert argv[:2] == ["harness", "run"] and argv[-2:] == ["--run-id", run_id]
    with FakeOpenAI(key=KEY, port=port) as srv:
        serve_offline_kernels(srv)
        again = harness(*argv[1:], env=env, timeout=1200)
    assert again.returncode == 0, again.stdout + again.stderr
    assert query(results, "SELECT status FROM runs WHERE run_id=?", run_id)[0][0] == "finished"
    assert query(results, "SELECT op, status FROM run_ops WHERE run_id=?", run_id) == [("relu", "finished")]
    assert query(results, "SELECT COUNT(*) FROM verdicts WHERE run_id=? AND mode='feedback'", run_id)[0][0] == 2
    assert len(srv.requests) == 1  # relu's second trial: its first came from the store
