"""What each build order costs a judgement on this machine's CPU (sandbox/build/buildphase.py), warm
build cache, feedback mode: "sealed" (a build worker imports first, the judging worker loads
sealed), "warm-apart" (a throwaway worker makes the first calls too) and the fallback chain of
an extension built inside forward, cold (sealed fails, then warm-apart builds it)."""

from __future__ import annotations

from pathlib import Path

from sandbox.evaluate import EvalConfig, evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Status
from tests.support.caches import fresh_build_cache
from tests.support.evalconfig import fast_config

REPO = Path(__file__).resolve().parents[2]
RELU = load_task(REPO / "tests" / "adversarial" / "tasks" / "relu.py")
CANDS = REPO / "tests" / "evaluator" / "candidates"
HONEST = (REPO / "tests" / "adversarial" / "candidates" / "honest_cpu_relu.py").read_text()
LAZY = (CANDS / "build_apart_lazy_relu.py").read_text()
MARKED = HONEST + "\n# compiled like a numba kernel would be: the warm-apart order\n"


def _cfg(cache: Path, name: str) -> EvalConfig:
    return fast_config(seed=0, target_ci=0.01, timeout_s=900.0, build_dir=str(fresh_build_cache(cache)),
                       candidate_name=name)


def _bench(benchmark, tmp_path_factory, source: str, order: str) -> None:
    cache = tmp_path_factory.mktemp(f"cache-{order}")
    cfg = _cfg(cache, f"{order}.py")
    assert evaluate(RELU, source, cfg).status is Status.VALID  # the build, not timed
    v = benchmark.pedantic(lambda: evaluate(RELU, source, cfg), rounds=3, iterations=1)
    assert v.status is Status.VALID and v.evidence["build_apart"]["order"] == order, v.evidence["build_apart"]
    benchmark.extra_info["order"] = order
    benchmark.extra_info["durations_s"] = v.durations_s


def test_sealed_order(benchmark, tmp_path_factory):
    _bench(benchmark, tmp_path_factory, HONEST, "sealed")


def test_warm_apart_order(benchmark, tmp_path_factory):
    _bench(benchmark, tmp_path_factory, MARKED, "warm-apart")


def test_lazy_build_falls_back_from_sealed_to_warm_apart(benchmark, tmp_path_factory):
    """Cold build cache every round: with a warm one the sealed judging worker finds the build
    its first call asks for and stays sealed (no fallback), so the chain only costs when cold."""
    import itertools

    fresh = (tmp_path_factory.mktemp(f"cache-lazy-{i}") for i in itertools.count())
    v = benchmark.pedantic(lambda: evaluate(RELU, LAZY, _cfg(next(fresh), "lazy.py")), rounds=2, iterations=1)
    assert v.status is Status.VALID and v.evidence["build_apart"]["order"] == "warm-apart", v.evidence["build_apart"]
    benchmark.extra_info["durations_s"] = v.durations_s
