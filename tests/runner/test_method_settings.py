"""Every run records its effective settings (issue 30): the method's resolved arguments, the LLM's
sampling, a hash of each prompt template, the seed kernels used, and per op the trials and LLM
calls spent per stage; ``harness runs show --json`` prints them. Seed kernels are judged before
the method starts (trial -1, not charged), can be an op's best, and the op records the best's
speedup over the seed. The judge is the runner tests' stand-in (the verdicts' content is not
what these tests assert)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.methods.base import Budget
from harness.methods.settings import template_hash
from harness.runner import RunConfig, run
from harness.store import Results
from tests.runner.test_runner import Judge


def go(tmp_path, method, run_id, budget=4, ops=("relu",), **kw):
    cfg = RunConfig(method=method, ops=list(ops), budget=Budget(evaluations=budget), results=tmp_path,
                    run_id=run_id, progress=False, **kw)
    judge = Judge()
    rep = run(cfg, judge=judge)
    res = Results.open(tmp_path)
    return rep, res.get_run(run_id), res, judge


def test_a_default_run_records_the_resolved_settings_and_runs_show_prints_them(tmp_path):
    _, info, res, _ = go(tmp_path, "evoengineer-full", "ee")
    ms = info.config["method_settings"]
    assert (ms["variant"], ms["population"], ms["insights"], ms["protocol"]) == ("full", 5, 3, "paper")
    assert info.config["method_options"] == {}  # nothing typed, everything recorded
    assert info.config["llm_settings"] == {"temperature": None, "max_tokens": None, "top_p": None, "seed": 0}
    hashes = info.config["prompt_hashes"]
    assert set(hashes) == {"evoengineer/init.j2", "evoengineer/crossover.j2", "evoengineer/mutation.j2"}
    assert hashes["evoengineer/init.j2"] == template_hash("evoengineer/init.j2")
    out = CliRunner().invoke(main, ["runs", "show", "ee", "--results", str(tmp_path), "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["method_settings"] == ms and doc["llm_settings"]["seed"] == 0
    text = CliRunner().invoke(main, ["runs", "show", "ee", "--results", str(tmp_path)]).output
    assert "method_settings" in text and '"population": 5' in text


@pytest.mark.parametrize("method,stages", [
    ("eoh", {"i1"}),
    ("funsearch", {"sample"}),
    ("ai-cuda-engineer", {"convert", "translate", "evolve"}),
])
def test_trials_and_llm_calls_are_recorded_per_stage(tmp_path, method, stages):
    rep, info, res, _ = go(tmp_path, method, "st", budget=5, seed_kernels=None)
    usage = res.get_op("st", "relu").usage
    assert set(usage["stages"]) >= stages
    assert sum(s["trials"] for s in usage["stages"].values()) == rep.ops[0].total == 5
    assert sum(s["llm_calls"] for s in usage["stages"].values()) == usage["llm_calls"]
    ops = json.loads(CliRunner().invoke(main, ["runs", "show", "st", "--results", str(tmp_path), "--json"]).output)["ops"]
    assert ops[0]["stages"] == usage["stages"]


def test_seed_kernels_are_judged_first_uncharged_and_the_speedup_over_them_recorded(tmp_path):
    rep, info, res, judge = go(tmp_path, "evoengineer-free", "sd", budget=3, ops=("relu", "elu"),
                               seed_kernels="suite")
    assert info.config["seed_kernels"]["ops"] == ["relu"] and info.config["seed_kernels"]["used"]
    relu = [c for c in res.list_candidates("sd", "relu")]
    assert [c.trial for c in relu] == [-1, 0, 1, 2] and relu[0].operator == "seed"
    assert "seed_relu_cpp_v1" in relu[0].source  # the shipped CPU seed
    assert rep.ops[0].total == 3 and res.get_op("sd", "relu").usage["evaluations"] == 3  # not charged
    seed = res.get_op("sd", "relu").usage["seed"]
    assert seed["status"] == "valid" and seed["speedup_vs_seed"] > 0
    assert seed["final_verdict_id"] or seed["is_best"]
    assert [c.trial for c in res.list_candidates("sd", "elu")] == [0, 1, 2]  # no seed for elu
    assert "seed" not in res.get_op("sd", "elu").usage
    show = json.loads(CliRunner().invoke(main, ["runs", "show", "sd", "--results", str(tmp_path), "--json"]).output)
    assert [o["trials"] for o in show["ops"]] == [3, 3]  # the seed is not a trial
    _, _, res2, judge2 = go(tmp_path, "best-of-n", "bn", budget=2, seed_kernels="suite")
    assert [c.trial for c in res2.list_candidates("bn", "relu")] == [0, 1]  # best-of-N takes no seed


def test_bad_seed_folder_and_archive_file_are_one_line_usage_errors(tmp_path):
    bad = tmp_path / "archive.json"
    bad.write_text("not json")
    for args, hint in ((["--seed-kernels", str(tmp_path / "nope")], "--seed-kernels"),
                       (["--archive", str(bad)], "--archive")):
        out = CliRunner().invoke(main, ["run", "--method", "ai-cuda-engineer", "--ops", "relu",
                                        "--device", "cpu", "--results", str(tmp_path), *args])
        assert out.exit_code == 2 and hint in out.output, out.output
    with pytest.raises(ValueError, match="keeps no innovation archive"):
        go(tmp_path, "eoh", "ar", archive=str(tmp_path / "a.json"))
