"""``harness runs list/show/export`` over a filled store."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.store.fill_store import OPS, fill
from tests.support.cli import invoke


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("results")
    fill(d).close()
    return d


def run(*args):
    res = invoke("runs", *args)
    return res


def test_runs_list_shows_every_run_and_labels_the_offline_model(results):
    res = run("list", "--results", results)
    assert res.exit_code == 0, res.output
    for rid in ("evoengineer-s0", "evoengineer-s1", "best-of-n-s0", "funsearch-s0"):
        assert rid in res.output
    assert "offline (offline model)" in res.output
    rows = json.loads(run("list", "--results", results, "--json").output)
    assert {r["run_id"] for r in rows} == {
        "evoengineer-s0",
        "evoengineer-s1",
        "best-of-n-s0",
        "funsearch-s0",
    }
    assert all(r["ops"] == len(OPS) for r in rows)


def test_runs_show_prints_per_op_table_and_cpu_note(results):
    res = run("show", "best-of-n-s0", "--results", results)
    assert res.exit_code == 0, res.output
    assert "CPU host timers" in res.output
    for op in OPS:
        assert op in res.output
    data = json.loads(run("show", "evoengineer-s0", "--results", results, "--json").output)
    assert data["run"]["method"] == "evoengineer" and len(data["ops"]) == len(OPS)


def test_runs_export_csv_has_one_row_per_verdict(results):
    res = run("export", "funsearch-s0", "--results", results, "--csv")
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.output)))
    from harness.store import Results

    assert len(rows) == len(Results.open(results).list_verdicts("funsearch-s0"))
    assert {r["mode"] for r in rows} <= {"feedback", "final"}
    assert rows[0]["method"] == "funsearch"


def test_runs_export_json_round_trips_verdicts(results, tmp_path):
    out = tmp_path / "x.json"
    res = run("export", "--results", results, "--json", "--out", out)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert len(data["runs"]) == 4
    cand = data["runs"][0]["candidates"][0]
    assert cand["verdicts"] and "status" in cand["verdicts"][0]


def test_unknown_run_and_missing_store_name_the_fix(results, tmp_path):
    res = run("show", "nope", "--results", results)
    assert res.exit_code != 0 and "no run 'nope'" in res.output
    res = run("list", "--results", tmp_path / "empty")
    assert res.exit_code != 0 and "pass --results DIR" in res.output


def test_runs_show_says_which_side_of_1_each_final_speedup_lies_on(results):
    """Each final speedup reads with its direction (issue 29 item 3: in the CLI too): the word is
    checked against the 95% interval of the same op in the --json output, by hand."""
    text = run("show", "evoengineer-s0", "--results", results).output
    ops = json.loads(run("show", "evoengineer-s0", "--results", results, "--json").output)["ops"]
    words = []
    for o in ops:
        s = o["speedup_eager"]
        if s is None:
            continue
        lo, hi = s["ci"]
        word = "faster" if lo > 1 else "slower" if hi < 1 else "no clear difference"
        line = next(ln for ln in text.splitlines() if ln.startswith(o["op"] + " "))
        assert f"{s['value']:.2f}x [{lo:.2f}, {hi:.2f}] {word}" in line, line
        words.append(word)
    assert words, "the filled store has final speedups"
