"""leaderboard.json: typed, versioned, round-trips, and its numbers match a computation by hand from the store."""

from __future__ import annotations

import json
import math

import pytest

from harness.leaderboard.build import build_leaderboard
from harness.leaderboard.collect import collect
from harness.leaderboard.model import (
    HOST_TIMER_LABEL,
    OFFLINE_LABEL,
    SCHEMA_VERSION,
    Leaderboard,
    LeaderboardError,
)


@pytest.fixture(scope="module")
def runs(filled_results):
    return collect([filled_results])


@pytest.fixture(scope="module")
def lb(runs, filled_results):
    return build_leaderboard(runs, [str(filled_results)])


def test_leaderboard_json_round_trips_to_the_same_typed_tree(lb):
    text = lb.to_json()
    again = Leaderboard.from_json(text)
    assert again.to_dict() == lb.to_dict()
    assert again.entries[0].summaries["eager"].geomean == lb.entries[0].summaries["eager"].geomean


def test_leaderboard_json_is_strict_json_with_schema_version_and_provenance(built_site):
    data = json.loads((built_site / "leaderboard.json").read_text(), parse_constant=_no_nan)
    assert data["schema_version"] == SCHEMA_VERSION
    prov = data["provenance"]
    for key in (
        "generated_at",
        "git_describe",
        "packages",
        "platform",
        "run_hardware",
        "first_run",
    ):
        assert key in prov
    assert "NVIDIA H200" in prov["run_hardware"]
    assert set(data) >= {"entries", "ops", "pairwise", "tables", "primary_baseline"}


def _no_nan(name):
    raise AssertionError(f"leaderboard.json holds {name}")


def test_newer_schema_version_is_refused_with_the_fix(lb):
    d = lb.to_dict()
    d["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(LeaderboardError, match="rebuild it with `harness leaderboard build`"):
        Leaderboard.from_dict(d)
    with pytest.raises(LeaderboardError, match="no schema_version"):
        Leaderboard.from_dict({"entries": []})


def test_unknown_keys_from_newer_minor_versions_are_ignored(lb):
    d = lb.to_dict()
    d["something_new"] = 1
    d["entries"][0]["also_new"] = {"x": 1}
    assert Leaderboard.from_dict(d).entries[0].entry_id == lb.entries[0].entry_id


def test_ranking_table_declares_which_direction_is_better(lb):
    t = lb.table("overview")
    cols = {c.key: c for c in t.columns}
    assert cols["rank"].lower_is_better is True
    for k in ("geomean", "median", "fast_1", "fast_2", "correct_rate", "compiled_rate"):
        assert cols[k].lower_is_better is False
    # the two GPU entries rank in one table; the CPU entry in its own (another device class)
    assert [r["rank"] for r in t.rows] == [1, 2]
    assert t.context["device"] == "cuda" and t.context["hardware"] == "NVIDIA H200"
    geo = [r["geomean"]["value"] for r in t.rows]
    assert geo == sorted(geo, reverse=True)


def test_runs_group_into_entries_with_seeds(lb):
    ids = {e.entry_id: e for e in lb.entries}
    evo = next(e for e in lb.entries if e.method == "evoengineer")
    assert [r.seed for r in evo.runs] == [0, 1]
    assert evo.summaries["eager"].ci_kind == "t over 2 seeds"
    assert len(ids) == 3


def test_offline_and_cpu_entries_are_labelled(lb):
    bon = next(e for e in lb.entries if e.method == "best-of-n")
    assert bon.offline and bon.host_timers
    assert bon.badges == [OFFLINE_LABEL, HOST_TIMER_LABEL]
    evo = next(e for e in lb.entries if e.method == "evoengineer")
    assert not evo.offline and not evo.host_timers and evo.badges == []


def _by_hand(results, run_id: str) -> tuple[float, float, float]:
    """(geomean of the deployed speedups, fast_1, correct rate) of one run, computed here from the
    store's rows with the definitions of docs/metrics.md, not by harness.stats: per op the final
    kernel's eager speedup clamped at 1 (1 without a valid final), fast_1 the share of ops whose
    final is valid with its 95% interval above 1, the correct rate valid trials over all trials."""
    import sqlite3

    con = sqlite3.connect(results / "harness.sqlite")
    try:
        ops = [r[0] for r in con.execute("SELECT op FROM run_ops WHERE run_id=? ORDER BY op", (run_id,))]
        finals = {op: (st_, json.loads(vj)) for op, st_, vj in con.execute(
            "SELECT op, status, verdict_json FROM verdicts WHERE run_id=? AND mode='final'", (run_id,))}
        trials = con.execute("SELECT status FROM verdicts WHERE run_id=? AND mode='feedback'", (run_id,)).fetchall()
    finally:
        con.close()
    deployed, fast = [], 0
    for op in ops:
        status, verdict = finals.get(op, (None, None))
        if status == "valid":
            e = verdict["speedups"]["eager"]
            deployed.append(max(1.0, e["value"]))
            fast += e["ci_low"] > 1.0
        else:
            deployed.append(1.0)
    geomean = math.exp(sum(math.log(d) for d in deployed) / len(deployed))
    return geomean, fast / len(ops), sum(t[0] == "valid" for t in trials) / len(trials)


def test_single_run_entry_numbers_match_a_computation_by_hand(lb, filled_results):
    geomean, fast_1, correct = _by_hand(filled_results, "funsearch-s0")
    got = next(e for e in lb.entries if e.method == "funsearch").summaries["eager"]
    assert got.ci_kind == "bootstrap over ops"
    assert got.geomean.value == pytest.approx(geomean, rel=1e-9)
    assert got.geomean.ci_low <= got.geomean.value <= got.geomean.ci_high
    assert got.fast_1.value == pytest.approx(fast_1)
    assert got.correct_rate.value == pytest.approx(correct)
    assert geomean > 1.0 and 0 < correct < 1  # the filled store has speedups and failures to count


def test_multi_seed_entry_is_geometric_mean_of_seed_geomeans(lb, filled_results):
    per = [_by_hand(filled_results, f"evoengineer-s{seed}")[0] for seed in (0, 1)]
    got = next(e for e in lb.entries if e.method == "evoengineer").summaries["eager"].geomean
    assert got.value == pytest.approx(math.sqrt(per[0] * per[1]))
    assert 0 < got.ci_low <= got.value <= got.ci_high


def test_ops_without_valid_kernel_count_as_one_and_failed_finals_are_not_valid(lb):
    for e in lb.entries:
        softmax = next(o for o in e.ops if o.op == "softmax")  # no valid trial in the fixture
        assert softmax.best is None and softmax.speedup_eager == 1.0
    bon = next(e for e in lb.entries if e.method == "best-of-n")
    sum_dim = next(o for o in bon.ops if o.op == "sum_dim")  # best kernel fails its final run
    assert sum_dim.best is not None and sum_dim.best.final_status == "incorrect"
    assert sum_dim.speedup_eager == 1.0


def test_pairwise_compares_only_entries_on_the_same_hardware(lb):
    # evoengineer and funsearch ran on the H200; best-of-n on a CPU: one comparable pair
    (p,) = lb.pairwise
    methods = {lb.entry(p.a).method, lb.entry(p.b).method}
    assert methods == {"evoengineer", "funsearch"}
    assert p.n_common == 5 and p.p_holm == p.p_value  # one test: Holm changes nothing


def test_pairwise_page_compares_only_inside_a_table_and_says_the_result_in_words(built_site, lb):
    page = (built_site / "pairwise.html").read_text()
    (p,) = lb.pairwise
    assert page.count('<table class="matrix">') == 1  # the GPU table; the CPU entry is alone in its own
    bon = next(e for e in lb.entries if e.method == "best-of-n")
    matrix = page.split('<table class="matrix">')[1].split("</table>")[0]
    assert bon.label not in matrix and "r = " in matrix
    assert "5 ops · 2 vs 1 seeds" in matrix or "5 ops · 1 vs 2 seeds" in matrix
    assert ("no clear difference" in matrix) == (not p.significant)


def test_best_kernel_carries_source_baselines_and_speed_of_light(lb):
    evo = next(e for e in lb.entries if e.method == "evoengineer")
    k = next(o.best for o in evo.ops if o.best and o.best.final_status == "valid")
    assert "class ModelNew" in k.source and len(k.source_sha256) == 64
    assert set(k.baselines_us) == {"eager", "compile"} and k.runtime_us > 0
    assert "pct_memory" in k.speed_of_light and k.hardware == "NVIDIA H200"


def test_broken_non_finite_speedup_falls_back_instead_of_breaking_the_json(tmp_path):
    from harness.store import Results, RunSpec
    from sandbox.verdict import Measurement, Mode, Speedup, Status, Verdict

    repo = Results.open(tmp_path)
    repo.create_run(
        RunSpec(method="x", llm="offline", budget={}, environment={}, git_commit="", run_id="r")
    )
    repo.ensure_op("r", "relu", "s")
    cid = repo.add_candidate("r", "relu", trial=0, source="a")
    inf, nan = float("inf"), float("nan")
    v = Verdict(
        status=Status.VALID, mode=Mode.FINAL, task="relu",
        speedups={"eager": Speedup("eager", inf, nan, inf, None, False)},
        timings={"candidate": Measurement(0.0, 0.0, 0.0, 1, False)},
    )  # fmt: skip
    repo.finish_op(
        "r", "relu", best_candidate_id=cid, final_verdict_id=repo.add_verdict(v, candidate_id=cid)
    )
    lb = build_leaderboard(collect([tmp_path]), [str(tmp_path)])
    json.loads(lb.to_json(), parse_constant=_no_nan)
    assert lb.entries[0].ops[0].speedup_eager == 1.0
