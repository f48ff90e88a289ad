"""A run is run by one process at a time (harness/store/runlock.py). `harness runs show` prints the
command that resumes a run not finished; given while another process still runs it, that command
would judge the same ops twice into one run. Real processes against a real store: while this
process runs a run, another `harness run --run-id` of it is refused naming this process, and
`harness runs show` says who runs it instead of offering the resume; once no process holds a
run left `running` (a crash), `runs show` says so and gives the resume command, and `runs list`
marks it."""

from __future__ import annotations

import os

import pytest

from harness.methods.base import Budget
from harness.runner import RunConfig, run
from harness.store import Results, RunSpec
from harness.store.runlock import RunBusy, hold, holder
from tests.runner.test_runner import Judge
from tests.support.cli import harness


class Peeks(Judge):
    """At its first judgement (the run held by this process), asks other processes about the run."""

    def __init__(self, results):
        super().__init__()
        self.results, self.seen = results, {}

    def __call__(self, task, source, config):
        if not self.seen:
            self.seen["show"] = harness("runs", "show", "r", "--results", self.results, timeout=120)
            self.seen["run"] = harness("run", "--method", "best-of-n", "--llm", "offline", "--ops", "relu",
                                       "--budget", "2", "--device", "cpu", "--results", self.results,
                                       "--run-id", "r", timeout=120)
            self.seen["holder"] = holder(self.results, "r")
            self.seen["list"] = harness("runs", "list", "--results", self.results, timeout=120)
        return super().__call__(task, source, config)


def test_a_run_being_run_is_refused_to_another_process_and_runs_show_says_who_runs_it(tmp_path):
    cfg = RunConfig(method="best-of-n", ops=["relu"], budget=Budget(evaluations=2), results=tmp_path,
                    run_id="r", progress=False)
    with pytest.raises(KeyboardInterrupt):  # the first process stops after one judgement
        run(cfg, judge=Judge(crash_at=1))
    peek = Peeks(tmp_path)
    run(cfg, judge=peek)  # the resume, in this process: meanwhile the others are asked

    me = f"pid {os.getpid()}"
    show, again = peek.seen["show"], peek.seen["run"]
    assert show.returncode == 0, show.stderr
    assert f"being run now by {me}" in show.stdout and "not finished yet: relu" in show.stdout, show.stdout
    assert "--run-id r" not in show.stdout  # no resume command for a run that is running
    assert again.returncode != 0 and f"run 'r' is being run now by {me}" in again.stderr, again.stderr
    assert "Traceback" not in again.stderr
    assert peek.seen["holder"].pid == os.getpid()
    assert " running " in peek.seen["list"].stdout and "no process" not in peek.seen["list"].stdout
    res = Results.open(tmp_path)
    assert res.get_run("r").status == "finished"
    assert len(res.list_candidates("r", "relu")) == 2  # the refused process judged nothing into it
    assert holder(tmp_path, "r") is None  # given back with the run's end

    info = res.get_run("r")  # a process that reopened it and died: `running`, held by nobody
    res.create_run(RunSpec(method=info.method, llm=info.llm, budget=info.budget, seed=info.seed,
                           device=info.device, run_id="r", rules=info.rules))
    show = harness("runs", "show", "r", "--results", tmp_path, timeout=120)
    assert "no process holds it: it ended without finishing" in show.stdout, show.stdout
    listed = harness("runs", "list", "--results", tmp_path, timeout=120)
    assert "running (no process)" in listed.stdout and "runs show RUN_ID" in listed.stdout, listed.stdout


def test_the_lock_is_exclusive_within_a_process_too(tmp_path):
    with hold(tmp_path, "x"):
        with pytest.raises(RunBusy, match="being run now by pid"):
            with hold(tmp_path, "x"):
                pass
        assert holder(tmp_path, "x").pid == os.getpid()
    assert holder(tmp_path, "x") is None
