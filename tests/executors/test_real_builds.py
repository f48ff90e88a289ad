"""The real sandboxed builder and judge behind the local pipeline (C++ on the CPU; slow: one
fresh C++ compile into a cache this module makes, plus compile errors that fail at once on an
unknown compiler flag)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.executors.local import LocalExecutor
from sandbox.build.prebuild import prebuild
from sandbox.evaluate import EvalConfig, evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Status
from tests.support.caches import fresh_build_cache
from tests.support.evalconfig import fast_config
from tests.support.judging import assert_valid

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "harness" / "bench" / "tools"))
import gpu_throughput  # noqa: E402

RELU = load_task(REPO / "reference_ops" / "activation" / "relu.py")
GOOD = gpu_throughput.make_candidates("cpp", 1, offset=900)[0]
BAD = GOOD.replace('verbose=False,', 'verbose=False,\n    extra_cflags=["-fno-such-flag-kh"],')


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One cache for the module: GOOD is built into it once (by the pipeline test, the only one
    that judges it); BAD never builds; PURE builds nothing."""
    return fresh_build_cache(tmp_path_factory.mktemp("real-builds-cache"))


def config(build_dir, **kw) -> EvalConfig:
    return fast_config(seed=0, feedback_timing_s=0.2, max_timing_s=0.2, correctness_trials=2, timeout_s=900.0,
                       build_dir=str(build_dir), **kw)


def test_a_compile_error_is_decided_by_the_build_worker_as_the_judge_decides_it(cache):
    cfg = config(cache)
    built = prebuild(RELU, BAD, cfg)
    judged = evaluate(RELU, BAD, cfg)
    assert built.outcome == "compile_error" and built.verdict is not None
    assert judged.status is Status.COMPILE_ERROR
    assert (built.verdict.status, built.verdict.rule, built.verdict.message) == (
        judged.status, judged.rule, judged.message)
    assert "no-such-flag" in built.verdict.logs and built.verdict.candidate_sha256 == judged.candidate_sha256


def test_pipeline_builds_ahead_so_the_timing_slot_compiles_nothing(cache):
    cfg = config(cache)
    with LocalExecutor(compile_workers=1, compile_cuts=False) as ex:
        good, bad = ex.submit(RELU, GOOD, cfg), ex.submit(RELU, BAD, cfg)
        good, bad = good.result(), bad.result()
        summary = ex.summary()
    assert_valid(good)
    assert good.evidence["executor"]["prebuild"] == "built"
    # the judgement skipped its own build worker (the executor's had just built it: sandbox/build/prebuild.py
    # take_built), and its judging worker loaded the build from the cache, compiling nothing
    assert good.evidence["build"]["by"].startswith("the executor's build worker"), good.evidence["build"]
    assert "build" not in good.durations_s
    jw = good.evidence["build_judging_worker"]
    assert jw["builds"] == 0 and jw["cache_hits"] >= 1, jw
    assert bad.status is Status.COMPILE_ERROR and bad.evidence.get("prebuilt") is True
    assert summary["judged"] == 1 and summary["compile_errors"] == 1 and summary["built"] == 1


PURE = """
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=0.0)
"""


def test_a_source_with_nothing_to_compile_goes_straight_to_the_timing_lane(cache):
    cfg = config(cache)
    with LocalExecutor(compile_workers=1, compile_cuts=False) as ex:
        v = ex.submit(RELU, PURE, cfg).result()
        built = list(ex.build_order)
    assert built == [] and v.evidence["executor"] == {"name": "local", "prebuild": "none", "lane": "cpu"}  # no build worker ran
    # and the judge decided it as ever: torch computed the result
    assert (v.status, v.rule) == (Status.REJECTED, "custom_code.torch_compute"), (v.status, v.rule, v.message)


def test_gpu_throughput_script_logic_on_cpu(tmp_path):
    """harness/bench/tools/gpu_throughput.py end to end with C++ and tiny counts (one shared cache: at most
    two compiles, none on a repeat run). Its candidates are honest ReLUs: every verdict of both
    sides is valid, and the two sides agree."""
    from sandbox.build.buildcache import default_root

    out = tmp_path / "r.json"
    rc = gpu_throughput.main(["--device", "cpu", "--lang", "cpp", "--serial", "1", "--pipeline", "2",
                              "--rerun", "1", "--workers", "1", "--no-cuts", "--timing-s", "0.2",
                              "--shared-cache", str(default_root() / "throughput-test"), "--json", str(out)])
    import json

    r = json.loads(out.read_text())
    assert r["compared"] == 1 and r["n_stock"] == 1
    assert r["statuses_stock"] == ["valid"] and r["statuses_pipeline"] == ["valid", "valid"], r["mismatch_detail"]
    assert rc == 0 and r["verdicts_identical"] and r["mismatches"] == [], r["mismatch_detail"]
    assert r["pipeline_per_min"] > 0 and 0 < r["busy_fraction"] <= 1.0
