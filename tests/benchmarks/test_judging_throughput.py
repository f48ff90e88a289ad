"""Judging throughput on this machine's CPU (C++ candidates): candidates per minute with a warm
build cache (the judge imports the built extension) and without (every judgement compiles)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from sandbox.evaluate import EvalConfig, evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Status
from tests.support.caches import fresh_build_cache
from tests.support.evalconfig import fast_config

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "harness" / "bench" / "tools"))
import gpu_throughput  # noqa: E402

RELU = load_task(REPO / "reference_ops" / "activation" / "relu.py")
SOURCE = gpu_throughput.make_candidates("cpp", 1, offset=800)[0]


def config(build_dir: Path) -> EvalConfig:
    return fast_config(seed=0, target_ci=0.01, timeout_s=900.0, build_dir=str(fresh_build_cache(build_dir)))


def _per_min(benchmark) -> None:
    benchmark.extra_info["candidates_per_min"] = round(60.0 / benchmark.stats.stats.mean, 2)


def test_judging_with_a_warm_build_cache(benchmark, tmp_path_factory):
    cache = tmp_path_factory.mktemp("warm-cache")
    assert evaluate(RELU, SOURCE, config(cache)).status is Status.VALID  # build once, not timed
    v = benchmark.pedantic(lambda: evaluate(RELU, SOURCE, config(cache)), rounds=5, iterations=1)
    assert v.status is Status.VALID and v.evidence["build"]["builds"] == 0
    _per_min(benchmark)


@pytest.mark.timeout(3600)
def test_judging_without_the_build_cache(benchmark, tmp_path_factory):
    fresh = (tmp_path_factory.mktemp(f"cold-{i}") for i in itertools.count())
    v = benchmark.pedantic(lambda: evaluate(RELU, SOURCE, config(next(fresh))), rounds=2, iterations=1)
    assert v.status is Status.VALID and v.evidence["build"]["builds"] == 1
    _per_min(benchmark)
