"""Benchmarks run only with ``nox -s bench`` (``pytest tests/benchmarks --benchmark-only``) or
``KH_BENCH=1``; in the default test run they are skipped (CI stays fast)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
(HERE.parents[1] / ".benchmarks").mkdir(exist_ok=True)  # --benchmark-json=.benchmarks/... (gitignored)


def pytest_collection_modifyitems(config, items):
    if config.getoption("benchmark_only", default=False) or os.environ.get("KH_BENCH") == "1":
        return
    skip = pytest.mark.skip(reason="benchmark: run with nox -s bench (or KH_BENCH=1 pytest tests/benchmarks)")
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def synthetic_results(tmp_path_factory):
    """10 methods x 91 ops x 10 trials (about 10k verdicts) through the store API."""
    from tests.benchmarks.synth import fill_synthetic

    d = tmp_path_factory.mktemp("bench_results")
    repo = fill_synthetic(d)
    repo.close()
    return d
