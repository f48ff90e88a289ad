"""The GPU benchmark tool (harness/bench, issue 28 item 2): every scenario names a program that
exists and takes the arguments it is given, a scenario's run writes one JSON record with the
machine, commit, command, exit and summary, and scripts/ keeps only setup, demo and service helpers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.bench import record
from harness.bench.__main__ import run
from harness.bench.scenarios import SCENARIOS, Scenario

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_scenario_runs_a_program_of_the_tool_that_accepts_its_arguments(name):
    s = SCENARIOS[name]
    prog = next(a for a in s.argv if a.startswith("harness/bench/tools/"))
    assert (REPO / prog).is_file(), prog
    if prog.endswith(".py"):  # its own argument parser accepts the scenario's arguments
        args = [a.replace("{out}", "/tmp/x") for a in s.argv[s.argv.index(prog) + 1:]]
        src = (REPO / prog).read_text()
        for flag in (a for a in args if a.startswith("--")):
            assert f'"{flag}"' in src, f"{name}: {prog} has no {flag}"
    assert 0 < s.limit_s <= 600, "a device call runs at most 10 minutes"


def test_a_run_writes_one_record_with_the_machine_commit_command_and_summary(tmp_path, monkeypatch):
    monkeypatch.delenv("OUT", raising=False)
    s = Scenario("echo", "a stand-in", (sys.executable, "-c", "print('line one'); print('verdict: valid'); "
                 "open('{out}/summary.txt', 'w').write('the summary')"), 60, summary="summary.txt")
    monkeypatch.setitem(SCENARIOS, "echo", s)
    monkeypatch.setattr(record, "RECORDS", tmp_path / "records")
    rc, paths = run("echo", tmp_path / "out")
    assert rc == 0 and (tmp_path / "out" / "output.log").read_text() == "line one\nverdict: valid\n"
    rec = json.loads(paths[0].read_text())
    assert paths[0].parent == tmp_path / "records" and paths[0].name.endswith("-echo.json")
    assert rec["scenario"] == "echo" and rec["exit"] == 0 and rec["summary"] == "the summary"
    assert rec["command"].endswith("open('" + str(tmp_path / "out") + "/summary.txt', 'w').write('the summary')")
    assert rec["machine"]["cpus"] and rec["machine"]["gpus"] and rec["commit"]


def test_arguments_after_the_double_dash_reach_the_program_after_the_runs_own_options(tmp_path, monkeypatch):
    from harness.bench.__main__ import main

    monkeypatch.delenv("OUT", raising=False)
    monkeypatch.setitem(SCENARIOS, "args", Scenario("args", "a stand-in", (sys.executable, "-c",
                        "import sys; open('{out}/argv.txt', 'w').write(' '.join(sys.argv[1:]))"), 60))
    monkeypatch.setattr(record, "RECORDS", tmp_path / "records")
    assert main(["run", "args", "--out", str(tmp_path / "out"), "--limit-s", "30", "--", "--deadline-s", "280"]) == 0
    assert (tmp_path / "out" / "argv.txt").read_text() == "--deadline-s 280"


def test_a_scenario_past_its_limit_is_killed_and_recorded_as_124(tmp_path, monkeypatch):
    monkeypatch.delenv("OUT", raising=False)
    monkeypatch.setitem(SCENARIOS, "sleepy", Scenario("sleepy", "a stand-in",
                                                      (sys.executable, "-c", "import time; time.sleep(60)"), 1))
    monkeypatch.setattr(record, "RECORDS", tmp_path / "records")
    rc, paths = run("sleepy", tmp_path / "out")
    assert rc == 124 and json.loads(paths[0].read_text())["exit"] == 124


def test_the_list_names_every_scenario_and_scripts_keeps_only_setup_demo_and_helpers():
    r = subprocess.run([sys.executable, "-m", "harness.bench", "list"], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert [ln.split()[0] for ln in r.stdout.splitlines()] == list(SCENARIOS)
    assert sorted(p.name for p in (REPO / "scripts").iterdir() if p.name != "__pycache__") == [
        "demo.sh", "podman_service.sh", "ray_wheel.py", "setup.sh", "site_screenshots.py"]
