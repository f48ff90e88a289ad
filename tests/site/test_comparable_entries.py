"""Issue 29: a ranking that cannot mislead. Stores written through the store API with stated
numbers (tests/site/stores.py), built into a leaderboard and a site: runs differing in a setting
are separate entries whose labels name it; runs equal in every setting but the seed are seeds of
one entry; runs over different op sets never share an entry or a table; an op without a valid
kernel and a valid but slower kernel both count 1.0 in the ranking key (the raw speedup beside
it); a slowdown reads "slower", never "not significant"; every op row links its files and the
command that re-judges it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.leaderboard.build import build_leaderboard
from harness.leaderboard.collect import collect
from harness.leaderboard.render import render_site
from harness.store import Results
from tests.site.pagecheck import check_all_pages, needs_chromium, open_page
from tests.site.stores import add_run

FIVE = ["relu", "softmax", "sum_dim", "matmul_square", "layer_norm"]
SLOW = [(0.130, 0.128, 0.133)]  # a clear slowdown, one session


def _lb(path):
    runs = collect([path])
    return build_leaderboard(runs, [str(path)]), runs


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Every case of the issue in one store (GPU runs unless stated)."""
    d = tmp_path_factory.mktemp("comparable")
    repo = Results.open(d)
    ok3 = [(2.0, 1.9, 2.1), (2.2, 2.1, 2.3), (2.1, 2.0, 2.2)]  # three judging sessions
    # 1. three runs differing only in their server port and budget (2/4/8)
    for port, budget in ((8001, 2), (8002, 4), (8003, 8)):
        add_run(repo, f"port{port}", llm=f"mock-coder@http://127.0.0.1:{port}/v1", budget=budget,
                ops={"relu": ok3, "softmax": ok3})  # fmt: skip
    # 2. runs equal in every setting but the seeds (method and LLM seed): one entry of 3 seeds
    for seed in (0, 1, 2):
        add_run(repo, f"seed{seed}", method="best-of-n", variant=None, budget=4, seed=seed,
                config={"llm_settings": {"temperature": 0.7, "max_tokens": 512, "seed": 100 + seed}},
                ops={"relu": [(1.2 + 0.1 * seed, 1.1, 1.5)], "softmax": [(0.9, 0.8, 0.95)]})  # fmt: skip
    # ... and one that differs in its temperature only: its own entry
    add_run(repo, "hot", method="best-of-n", variant=None, budget=4,
            config={"llm_settings": {"temperature": 1.0, "max_tokens": 512, "seed": 7}},
            ops={"relu": [(1.3, 1.2, 1.4)], "softmax": [(1.1, 1.05, 1.2)]})  # fmt: skip
    # 3. offline runs of one method over relu (budget 2, twice) and over relu,softmax
    for seed in (0, 1):
        add_run(repo, f"relu-only-{seed}", method="funsearch", variant=None, llm="offline", budget=2,
                seed=seed, ops={"relu": [(1.4, 1.3, 1.5)]})  # fmt: skip
    add_run(repo, "relu-softmax", method="funsearch", variant=None, llm="offline", budget=2,
            ops={"relu": [(1.4, 1.3, 1.5)], "softmax": [(1.2, 1.1, 1.3)]})  # fmt: skip
    # 4. five ops: A valid on all five with a slow softmax, B failing softmax; else equal
    same = {"relu": [(3.0, 2.9, 3.1)], "sum_dim": [(1.5, 1.4, 1.6)], "matmul_square": [(1.2, 1.1, 1.3)],
            "layer_norm": [(2.0, 1.9, 2.1)]}  # fmt: skip
    add_run(repo, "all-valid", method="eoh", variant=None, suite="smoke",
            ops={**same, "softmax": [(0.10, 0.09, 0.11)]})  # fmt: skip
    add_run(repo, "failed-softmax", method="eoh", variant=None, budget=8, suite="smoke",
            ops={**same, "softmax": "incorrect"})  # fmt: skip
    # 5. a run that set out to judge the five ops and finished two: listed, not ranked
    add_run(repo, "unfinished", method="ai-cuda-engineer", variant=None, planned=FIVE, suite="smoke",
            ops={"relu": [(9.0, 8.0, 10.0)], "softmax": [(9.0, 8.0, 10.0)]})  # fmt: skip
    # 6. a clear slowdown on a CPU run (host timers)
    add_run(repo, "slow-cpu", method="best-of-n", variant=None, llm="offline", device="cpu",
            ops={"relu": SLOW})  # fmt: skip
    repo.close()
    return d


@pytest.fixture(scope="module")
def lb(store):
    return _lb(store)[0]


@pytest.fixture(scope="module")
def site(lb, store, tmp_path_factory):
    out = tmp_path_factory.mktemp("comparable_site")
    runs = collect([store])
    render_site(lb, out, evidence={(r.run.run_id, op): v for r in runs for op, v in r.evidence.items()})
    return out


def by_run(lb, run_id):
    return next(e for e in lb.entries if any(r.run_id == run_id for r in e.runs))


def test_runs_differing_in_budget_and_port_are_three_entries_whose_labels_say_so(lb):
    es = [by_run(lb, f"port{p}") for p in (8001, 8002, 8003)]
    assert len({e.entry_id for e in es}) == 3 and all(len(e.runs) == 1 for e in es)
    labels = [e.label for e in es]
    assert len(set(labels)) == 3
    for e, budget, port in zip(es, (2, 4, 8), (8001, 8002, 8003), strict=True):
        assert e.label.startswith("evoengineer-free (free) · mock-coder · budget=")
        assert f"budget={budget}" in e.label and f"127.0.0.1:{port}" in e.label
    assert len({e.table_id for e in es}) == 1  # same op set, device, rules: one table


def test_runs_equal_but_for_their_seeds_are_one_entry_with_a_ci_over_seeds(lb):
    e = by_run(lb, "seed0")
    assert sorted(r.run_id for r in e.runs) == ["seed0", "seed1", "seed2"]
    s = e.summaries["eager"]
    assert s.ci_kind == "t over 3 seeds"
    # deployed geomean per seed: sqrt(relu * max(1, 0.9)) = sqrt(1.2), sqrt(1.3), sqrt(1.4)
    per = np.log(np.sqrt([1.2, 1.3, 1.4]))
    half = sps.t.ppf(0.975, 2) * per.std(ddof=1) / math.sqrt(3)
    assert s.geomean.value == pytest.approx(math.exp(per.mean()))
    assert (s.geomean.ci_low, s.geomean.ci_high) == (pytest.approx(math.exp(per.mean() - half)),
                                                     pytest.approx(math.exp(per.mean() + half)))
    hot = by_run(lb, "hot")
    assert hot.entry_id != e.entry_id
    assert "temperature=1" in hot.label and "temperature=0.7" in e.label
    assert "seed" not in e.settings and e.settings["max_tokens"] == 512


def test_runs_over_different_op_sets_are_separate_entries_in_separate_tables(lb):
    one, two = by_run(lb, "relu-only-0"), by_run(lb, "relu-softmax")
    assert one.entry_id != two.entry_id and one.table_id != two.table_id
    assert [r.run_id for r in one.runs] == ["relu-only-0", "relu-only-1"]
    assert [o.op for o in one.ops] == ["relu"] and [o.op for o in two.ops] == ["relu", "softmax"]
    assert "ops=relu" in one.label and "ops=relu+softmax" in two.label
    t1, t2 = lb.table(one.table_id), lb.table(two.table_id)
    assert t1.context["ops"] == ["relu"] and t2.context["ops"] == ["relu", "softmax"]
    assert [r["entry"] for r in t1.rows] == [one.entry_id]
    assert two.entry_id in [r["entry"] for r in t2.rows] and one.entry_id not in [r["entry"] for r in t2.rows]
    assert "1 op: relu" in t1.title and "2 ops: relu, softmax" in t2.title and "suite version" in t1.title


def test_a_failed_op_and_a_slow_valid_op_both_count_one_and_the_valid_entry_ranks_first(lb):
    a, b = by_run(lb, "all-valid"), by_run(lb, "failed-softmax")
    assert a.table_id == b.table_id
    sa = next(o for o in a.ops if o.op == "softmax")
    sb = next(o for o in b.ops if o.op == "softmax")
    assert sa.speedup_eager == sb.speedup_eager == 1.0
    assert sa.raw_eager == pytest.approx(0.10) and sb.raw_eager is None
    # deployed geomean, both: (3 * 1.5 * 1.2 * 2.0 * 1)^(1/5); raw: A over 5 ops, B over 4
    g = (3.0 * 1.5 * 1.2 * 2.0) ** 0.2
    assert a.summaries["eager"].geomean.value == pytest.approx(g)
    assert b.summaries["eager"].geomean.value == pytest.approx(g)
    assert a.summaries["eager"].geomean_raw.value == pytest.approx((3.0 * 1.5 * 1.2 * 2.0 * 0.1) ** 0.2)
    assert (a.summaries["eager"].valid_ops.value, b.summaries["eager"].valid_ops.value) == (1.0, 0.8)
    rows = lb.table(a.table_id).rows
    ranks = {r["entry"]: r["rank"] for r in rows}
    assert ranks[a.entry_id] < ranks[b.entry_id]
    assert "budget=4" in a.label and "budget=8" in b.label


def test_an_entry_that_did_not_finish_its_op_set_is_listed_but_not_ranked(lb):
    e = by_run(lb, "unfinished")
    assert not e.complete
    t = lb.table(e.table_id)
    assert e.entry_id not in [r["entry"] for r in t.rows]
    (u,) = [r for r in t.unranked if r["entry"] == e.entry_id]
    assert u["reason"].startswith("not ranked: 2 of 5 ops finished")
    assert t.table_id == by_run(lb, "all-valid").table_id  # the same op set: the same table
    assert not [p for p in lb.pairwise if e.entry_id in (p.a, p.b)]


def test_three_session_speedup_is_the_geometric_mean_with_an_interval_over_sessions(lb):
    k = next(o for o in by_run(lb, "port8001").ops if o.op == "relu").best
    s = k.speedups["eager"]
    x = np.log([2.0, 2.2, 2.1])
    half = sps.t.ppf(0.975, 2) * x.std(ddof=1) * math.sqrt(2 / 3)
    assert (s.sessions, k.sessions) == (3, 3) and s.session_values == (2.0, 2.2, 2.1)
    assert s.value == pytest.approx(math.exp(x.mean()))
    assert s.ci_low == pytest.approx(math.exp(x.mean() - half))
    assert s.ci_high == pytest.approx(math.exp(x.mean() + half))
    assert s.direction == "faster" and len(k.verdict_ids) == 3


def test_pairs_are_compared_only_inside_a_table_with_their_ops_and_seeds(lb):
    for p in lb.pairwise:
        assert lb.entry(p.a).table_id == lb.entry(p.b).table_id == p.table_id
        assert (p.seeds_a, p.seeds_b) == (len(lb.entry(p.a).runs), len(lb.entry(p.b).runs))
        assert p.n_common == len(lb.entry(p.a).ops)
    pair = next(p for p in lb.pairwise if {p.a, p.b} == {by_run(lb, "seed0").entry_id, by_run(lb, "hot").entry_id})
    assert pair.n_common == 2 and {pair.seeds_a, pair.seeds_b} == {3, 1}


def test_the_slowdown_reads_slower_on_every_page_never_not_significant(lb, site):
    e = by_run(lb, "slow-cpu")
    s = e.ops[0].best.speedups["eager"]
    assert s.direction == "slower" and s.significant and s.sessions == 1
    method = (site / "methods" / f"{e.entry_id}.html").read_text()
    op = (site / "ops" / "relu.html").read_text()
    for page in (method, op):
        assert "slower than eager" in page
        assert "not significant" not in page and "p=1" not in page
    assert "within one session" in method
    # the overview says it too, under the raw geomean of the entry's table
    index = (site / "index.html").read_text()
    table = index.split(f'id="{e.table_id}"')[1].split("</table>")[0]
    assert "0.13x" in table and "slower" in table and "not significant" not in index


def test_each_op_row_links_kernel_verdicts_environment_and_one_command(lb, site):
    e = by_run(lb, "port8001")
    page = (site / "methods" / f"{e.entry_id}.html").read_text()
    d = site / "rows" / e.entry_id / "relu"
    for name in ("kernel.py", "verdicts.json", "environment.json"):
        assert f'href="../rows/{e.entry_id}/relu/{name}"' in page and (d / name).is_file()
    assert (d / "kernel.py").read_text() == e.ops[0].best.source
    verdicts = json.loads((d / "verdicts.json").read_text())
    assert [v["speedups"]["eager"]["value"] for v in verdicts] == [2.0, 2.2, 2.1]
    assert json.loads((d / "environment.json").read_text())["gpu"] == "NVIDIA H100 80GB HBM3"
    assert f"harness leaderboard verify --leaderboard leaderboard.json --entry {e.entry_id} --op relu" in page
    # every link of every page resolves to a file (row files included)
    from urllib.parse import urlparse

    from tests.site.test_site_build import links

    n = 0
    for html in site.rglob("*.html"):
        for ref in links(html):
            if not ref.startswith("data:"):
                target = html.parent / urlparse(ref).path if urlparse(ref).path else html
                assert target.resolve().is_file(), f"{html.relative_to(site)} -> {ref}"
                n += "/rows/" in str(target.resolve())
    assert n >= 3 * sum(1 for e2 in lb.entries for o in e2.ops if o.best) * 2  # method and op pages


def test_every_table_on_the_overview_states_its_op_set_suite_version_device_and_rules(lb, site):
    index = (site / "index.html").read_text()
    ranking = [t for t in lb.tables if t.rows or t.unranked]
    # GPU: relu+softmax, relu, the five smoke ops; CPU: relu
    assert sorted((t.context["device"], len(t.context["ops"])) for t in ranking) == [
        ("cpu", 1), ("cuda", 1), ("cuda", 2), ("cuda", 5)]
    for t in ranking:
        assert f'id="table-{t.table_id}"' in index
        assert f"suite version <code>{t.context['suite_version']}</code>" in index
    assert "ops (smoke)" in lb.table(by_run(lb, "all-valid").table_id).title
    assert "not ranked: 2 of 5 ops finished" in index


@needs_chromium[0]
@needs_chromium[1]
def test_the_site_reads_right_in_chromium(browser, lb, site):
    """The overview, pairwise, ops pages, two entries' pages and an op page load from file://
    without console errors and every link on them (the row files included) resolves; the
    tables, labels and words are what a reader sees."""
    slow = by_run(lb, "slow-cpu")
    pages = [site / "index.html", site / "pairwise.html", site / "ops.html", site / "ops" / "relu.html",
             site / "methods" / f"{slow.entry_id}.html", site / "methods" / f"{by_run(lb, 'port8001').entry_id}.html"]
    assert check_all_pages(browser, site, pages) == 6
    page, problems = open_page(browser, (site / "index.html").as_uri())
    text = page.inner_text("main")
    for e in (by_run(lb, f"port{p}") for p in (8001, 8002, 8003)):
        assert e.label in text
    assert text.count("Ranking, strict rules") == 4 and "not ranked: 2 of 5 ops finished" in text
    ranked = page.eval_on_selector_all("table.ranking", "ts => ts.map(t => t.tBodies[0].rows.length)")
    assert sorted(ranked) == [1, 1, 2, 6]
    page.goto((site / "methods" / f"{slow.entry_id}.html").as_uri())
    cell = page.inner_text("#per-op tbody tr td:nth-child(3)")
    assert "slower than eager" in cell and "0.13x" in cell
    assert problems == []
    page.close()


def test_a_rows_verdict_file_keeps_samples_up_to_a_bound():
    from harness.leaderboard.render import MAX_SAMPLES, _lean

    v = {"status": "valid", "timings": {"candidate": {"median_us": 1.0, "samples_us": [1.0] * (MAX_SAMPLES + 1)},
                                        "eager": {"median_us": 2.0, "samples_us": [2.0] * 10}}}  # fmt: skip
    lean = _lean(v)
    assert lean["timings"]["candidate"]["samples_us"] == [] and lean["timings"]["candidate"]["samples_us_omitted"] == MAX_SAMPLES + 1
    assert lean["timings"]["eager"]["samples_us"] == [2.0] * 10 and len(v["timings"]["candidate"]["samples_us"]) == MAX_SAMPLES + 1


def test_entries_that_share_no_table_are_said_not_compared_and_how_to_compare_them(tmp_path):
    """Two methods over different op sets (a newcomer's first comparison): no pair is tested, and
    both the build's output and the pairwise page say why and what to run instead, with no empty
    pairs table."""
    from tests.support.cli import invoke

    repo = Results.open(tmp_path / "r")
    add_run(repo, "a", method="best-of-n", variant=None, ops={"relu": [(1.2, 1.1, 1.3)]})
    add_run(repo, "b", method="funsearch", variant=None, ops={"relu": [(1.1, 1.0, 1.2)],
                                                              "softmax": [(1.0, 0.9, 1.1)]})
    out = invoke("leaderboard", "build", "--results", tmp_path / "r", "--out", tmp_path / "site")
    assert out.exit_code == 0, out.output
    assert "no two entries are compared" in out.output and "the same --suite and --device" in out.output
    page = (tmp_path / "site" / "pairwise.html").read_text()
    assert "nothing to compare" in page and "run both with the" in page
    assert 'class="sortable"' not in page
