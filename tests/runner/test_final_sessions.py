"""Issue 29 in the runner: each op's final kernel is judged in N independent sessions (every
session stored under its own key, resumable, a failing session ends it), N = 3 on a GPU and 1 on
a CPU unless --final-sessions says otherwise; `harness run --seeds N` runs N seeds whose runs are
one leaderboard entry. The evaluator is a stand-in (tests/runner/test_runner.py: Judge)."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.cli.run import seed_configs
from harness.leaderboard.build import build_leaderboard
from harness.leaderboard.collect import collect
from harness.llm.config import LLMConfig
from harness.methods.base import Budget
from harness.runner import RunConfig, run
from harness.runner.orchestrate import final_sessions_for
from harness.store import Results, session_key
from sandbox.verdict import Status, Verdict
from tests.runner.test_runner import Judge


def cfg(tmp_path, **kw):
    base = dict(method="best-of-n", ops=["relu"], budget=Budget(evaluations=2), results=tmp_path,
                run_id="r", progress=False, final_sessions=3)  # fmt: skip
    return RunConfig(**{**base, **kw})


def finals(judge):
    return [c for c in judge.calls if c[2] == "final"]


def test_the_final_kernel_is_judged_in_three_sessions_each_stored_under_its_key(tmp_path):
    judge = Judge()
    rep = run(cfg(tmp_path), judge=judge)
    assert len(finals(judge)) == 3 and len({c[1] for c in finals(judge)}) == 1  # one kernel, 3x
    (op,) = rep.ops
    assert len(op.final_sessions) == 3 and all(v.valid for v in op.final_sessions)
    repo = Results.open(tmp_path)
    row = repo.get_op("r", "relu")
    sessions = repo.final_sessions("r", row.best_candidate_id)
    key = sessions[0].config_key
    assert [s.config_key for s in sessions] == [key, f"{key}#s1", f"{key}#s2"]
    assert row.final_verdict_id == sessions[0].verdict_id
    assert repo.get_run("r").config["final_sessions"] == 3
    table = rep.table()
    assert "sessions" in table.splitlines()[0] and "faster" in table
    # the leaderboard reads the three sessions back: one speedup over 3 sessions
    (e,) = build_leaderboard(collect([tmp_path]), [str(tmp_path)]).entries
    assert e.ops[0].best.speedups["eager"].sessions == 3 and e.ops[0].best.sessions == 3


def test_a_run_killed_between_sessions_judges_only_the_missing_ones_on_resume(tmp_path):
    first = Judge(crash_at=4)  # 2 feedback, session 1, then killed at session 2
    with pytest.raises(KeyboardInterrupt):
        run(cfg(tmp_path), judge=first)
    again = Judge()
    rep = run(cfg(tmp_path), judge=again)
    assert len(finals(again)) == 2 and not [c for c in again.calls if c[2] == "feedback"]
    assert len(rep.ops[0].final_sessions) == 3
    third = Judge()
    run(cfg(tmp_path), judge=third)  # finished: nothing judged again
    assert third.calls == []


class FailsSecondFinal(Judge):
    def __call__(self, task, source, config):
        v = super().__call__(task, source, config)
        if len(finals(self)) == 2:
            return Verdict(status=Status.INCORRECT, mode=config.mode, task=task.name,
                           device=config.device, message="extra0: max abs err 3.1")  # fmt: skip
        return v


def test_a_session_that_is_not_valid_ends_the_final_and_is_the_ops_verdict(tmp_path):
    judge = FailsSecondFinal()
    rep = run(cfg(tmp_path), judge=judge)
    assert len(finals(judge)) == 2
    (op,) = rep.ops
    assert op.final.status is Status.INCORRECT and [v.valid for v in op.final_sessions] == [True, False]
    (e,) = build_leaderboard(collect([tmp_path]), [str(tmp_path)]).entries
    (o,) = e.ops
    assert o.best.final_status == "incorrect" and o.speedup_eager == 1.0 and o.raw_eager is None


def test_default_sessions_are_three_on_a_gpu_and_one_on_a_cpu(tmp_path):
    assert (final_sessions_for("cuda", None), final_sessions_for("cuda:1", None)) == (3, 3)
    assert final_sessions_for("cpu", None) == 1 and final_sessions_for("cpu", 2) == 2
    with pytest.raises(ValueError, match="--final-sessions"):
        final_sessions_for("cuda", 0)
    judge = Judge()
    run(cfg(tmp_path, final_sessions=None), judge=judge)  # the CPU default
    assert len(finals(judge)) == 1
    assert Results.open(tmp_path).get_run("r").config["final_sessions"] == 1
    assert session_key("k", 0) == "k" and session_key("k", 2) == "k#s2"


def test_seeds_are_independent_runs_that_make_one_entry(tmp_path):
    base = cfg(tmp_path, run_id="evo", seed=5, final_sessions=1, llm_config=LLMConfig())
    runs = seed_configs(base, 3)
    assert [(c.seed, c.run_id) for c in runs] == [(5, "evo-s5"), (6, "evo-s6"), (7, "evo-s7")]
    if "seed" in {f.name for f in dataclasses.fields(LLMConfig)}:  # the LLM's sampling seed
        assert [c.llm_config.seed for c in runs] == [5, 6, 7]
    assert seed_configs(base, 1) == [base]
    for c in runs:
        run(c, judge=Judge())
    repo = Results.open(tmp_path)
    assert sorted((r.run_id, r.seed) for r in repo.list_runs()) == [("evo-s5", 5), ("evo-s6", 6), ("evo-s7", 7)]
    (e,) = build_leaderboard(collect([tmp_path]), [str(tmp_path)]).entries
    assert len(e.runs) == 3 and e.summaries["eager"].ci_kind == "t over 3 seeds"
    assert "seed" not in e.label


def test_the_cli_refuses_zero_seeds_and_zero_sessions(tmp_path):
    for flag in ("--seeds", "--final-sessions"):
        res = CliRunner().invoke(main, ["run", "--method", "best-of-n", "--ops", "relu", "--device", "cpu",
                                        "--results", str(tmp_path), flag, "0"])  # fmt: skip
        assert res.exit_code == 2 and flag in res.output
