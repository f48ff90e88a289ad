"""The harness's own overheads: verdict JSON round trip, store writes, stats, site build."""

from __future__ import annotations

import random

import pytest

from sandbox.verdict import Mode, Verdict
from tests.benchmarks.synth import fill_synthetic, valid_verdict


def test_verdict_json_round_trip(benchmark):
    v = valid_verdict("relu", Mode.FINAL, random.Random(0), samples=1000)

    def rt():
        return Verdict.from_json(v.to_json())

    back = benchmark(rt)
    assert back.to_dict() == v.to_dict()


def test_store_writes_1k_verdicts(benchmark, tmp_path):
    from harness.store import Results

    counter = iter(range(10**6))

    def write():
        d = tmp_path / f"s{next(counter)}"
        repo = fill_synthetic(d, methods=1, ops=100, trials=10)  # 1000 feedback + finals
        repo.close()
        return d

    d = benchmark.pedantic(write, rounds=3, iterations=1)
    repo = Results.open(d)
    try:
        n = repo.store.query("SELECT COUNT(*) AS n FROM verdicts WHERE mode='feedback'")[0]["n"]
    finally:
        repo.close()
    benchmark.extra_info["verdicts_written"] = n
    assert n == 1000


def test_stats_over_10k_verdicts(benchmark, synthetic_results):
    from harness.leaderboard.collect import collect
    from harness.stats import summarize_run

    def stats():
        runs = collect([synthetic_results])
        return [summarize_run(r.outcomes) for r in runs]

    out = benchmark.pedantic(stats, rounds=3, iterations=1)
    assert len(out) == 10 and all(s is not None for s in out)


@pytest.mark.timeout(1800)
def test_site_build_10_methods_x_91_ops(benchmark, synthetic_results, tmp_path):
    from click.testing import CliRunner

    from harness.cli import main

    def build():
        res = CliRunner().invoke(main, ["leaderboard", "build", "--results", str(synthetic_results),
                                        "--out", str(tmp_path / "site")])
        assert res.exit_code == 0, res.output
        return res

    benchmark.pedantic(build, rounds=2, iterations=1)
    assert (tmp_path / "site" / "index.html").exists()
