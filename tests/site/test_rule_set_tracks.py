"""Rule sets through the run, the store and the leaderboard (issue 15 item 3): a run's rule set
is stored with it and judges every candidate of it; a resumed run refuses another --rules; an
old store (schema v3) opens with its runs on the strict track; strict and partial entries land
on separate tracks of the rendered site; verify re-judges under the recorded rule set. The
evaluator is a stand-in here (its rule sets are judged for real in
tests/adversarial/test_rule_sets.py); store, runner, leaderboard and site are real."""

from __future__ import annotations

import re
import sqlite3

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.leaderboard.build import build_leaderboard
from harness.leaderboard.collect import collect
from harness.leaderboard.render import render_site
from harness.leaderboard.verify import verify
from harness.methods.base import Budget
from harness.runner import RunConfig, run
from harness.store import Results, StoreError
from harness.store.schema import MIGRATIONS, SCHEMA_VERSION
from sandbox.verdict import Measurement, Speedup, Status, Verdict


class Judge:
    """Valid, 2x faster than eager; records the rule set each candidate was judged under."""

    def __init__(self):
        self.rules: list[str] = []

    def __call__(self, task, source, config):
        self.rules.append(config.rules)
        eager = Measurement(50.0, 49.0, 51.0, 30, True)
        return Verdict(status=Status.VALID, mode=config.mode, task=task.name, device=config.device,
                       rules=config.rules, host_timers=True,
                       timings={"candidate": Measurement(25.0, 24.0, 26.0, 30, True), "eager": eager},
                       speedups={"eager": Speedup("eager", 2.0, 1.9, 2.1, 0.001, True)})


def _run(tmp_path, rules: str, run_id: str, method: str = "best-of-n", judge=None):
    judge = judge or Judge()
    run(RunConfig(method=method, ops=["relu"], budget=Budget(evaluations=2), results=tmp_path,
                  run_id=run_id, progress=False, rules=rules), judge=judge)
    return judge


def test_a_partial_run_judges_every_candidate_under_partial_and_stores_it(tmp_path):
    judge = _run(tmp_path, "partial", "p")
    assert judge.rules == ["partial"] * 3  # 2 feedback + 1 final
    res = Results.open(tmp_path)
    assert res.get_run("p").rules == "partial"
    rows = res.store.query("SELECT rules FROM verdicts WHERE run_id='p'")
    assert [r["rules"] for r in rows] == ["partial"] * 3
    assert all(v.verdict.rules == "partial" for v in res.list_verdicts("p"))


def test_a_resumed_run_refuses_another_rule_set_naming_the_flag(tmp_path):
    _run(tmp_path, "partial", "r")
    with pytest.raises(StoreError, match="--rules partial"):
        _run(tmp_path, "strict", "r")
    res = CliRunner().invoke(main, ["run", "--method", "best-of-n", "--ops", "relu", "--device", "cpu",
                                    "--results", str(tmp_path), "--run-id", "r", "--budget", "1"])
    assert res.exit_code == 2 and "--rules partial" in res.output and "Traceback" not in res.output


def test_an_old_store_opens_with_its_runs_and_verdicts_on_the_strict_track(tmp_path):
    con = sqlite3.connect(tmp_path / "harness.sqlite")
    for sql in MIGRATIONS[:3]:
        con.executescript(sql)
    con.execute("PRAGMA user_version = 3")
    con.execute("INSERT INTO runs (run_id, method, llm, budget_json, seed, device, created_at) "
                "VALUES ('old', 'm', 'offline', '{}', 0, 'cpu', 'then')")
    con.execute("INSERT INTO verdicts (run_id, op, mode, status, verdict_json, created_at) "
                "VALUES ('old', 'relu', 'final', 'valid', ?, 'then')", (Verdict(Status.VALID).to_json(),))
    con.commit()
    con.close()
    res = Results.open(tmp_path)
    assert res.store.schema_version() == SCHEMA_VERSION == 4
    assert res.get_run("old").rules == "strict"
    assert res.store.query("SELECT rules FROM verdicts")[0]["rules"] == "strict"


def _html(tmp_path, lb) -> str:
    out = tmp_path / "site"
    render_site(lb, out)
    return (out / "index.html").read_text()


def _track(html: str, rules: str) -> str:
    """The part of the index page under one track's heading."""
    m = re.search(rf'<h2 id="track-{rules}">(.*?)(?=<h2 |<h2>Plots)', html, re.S)
    assert m, f"no {rules} track on the page"
    return m.group(1)


def test_strict_and_partial_runs_land_on_separate_tracks_and_verify_uses_the_recorded_rules(tmp_path):
    res_dir = tmp_path / "results"
    _run(res_dir, "partial", "p", method="best-of-n")
    lb = build_leaderboard(collect([res_dir]), [str(res_dir)])
    assert [e.rules for e in lb.entries] == ["partial"]
    assert lb.table("overview").rows == () and len(lb.table("overview_partial").rows) == 1
    html = _html(tmp_path / "one", lb)
    assert "best-of-n" in _track(html, "partial")
    assert "No runs judged under the strict rules yet" in _track(html, "strict")

    _run(res_dir, "strict", "s", method="evoengineer-free")
    lb = build_leaderboard(collect([res_dir]), [str(res_dir)])
    html = _html(tmp_path / "two", lb)
    strict, partial = _track(html, "strict"), _track(html, "partial")
    assert "evoengineer" in strict and "best-of-n" not in strict
    assert "best-of-n" in partial and "evoengineer" not in partial
    assert not lb.pairwise  # entries of different tracks are never compared

    seen = []

    def evaluate_fn(task, source, config):
        seen.append(config.rules)
        return Judge()(task, source, config)

    report = verify(lb, evaluate_fn=evaluate_fn)
    assert sorted(seen) == ["partial", "strict"]
    assert {r.entry_id: r.rules for r in report.rows} == {e.entry_id: e.rules for e in lb.entries}
