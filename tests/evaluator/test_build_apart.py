"""Builds apart from judging (sandbox/build/buildphase.py): compilers run in a build worker; the judging
worker loads finished builds from a read-only build dir and is sealed (no exec) before import."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.build import buildphase
from sandbox.evaluate import EvalConfig, evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Status

HERE = Path(__file__).resolve().parent
RELU = HERE.parent / "adversarial" / "tasks" / "relu.py"
PROBE = (HERE / "candidates" / "build_apart_probe.py").read_text()


def _cfg(**kw) -> EvalConfig:
    # first_call_timeout_s: the judgement's first calls compile C++ here, which takes minutes on a
    # loaded 2-core box; the budget (sandbox/lane/firstcall.py) is not what these tests are about
    base = dict(device="cpu", profile="small", max_timing_s=0.5, feedback_timing_s=0.5, target_ci=0.05,
                candidate_name="build_apart_probe.py", first_call_timeout_s=400.0)
    base.update(kw)
    return EvalConfig(**base)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("build-apart-cache"))  # one compile for the module


def test_the_judging_worker_can_neither_write_its_build_dir_nor_start_a_process(cache):
    v = evaluate(load_task(RELU), PROBE, _cfg(build_dir=cache))
    assert v.status is Status.VALID, (v.status, v.rule, v.message, v.logs[-2000:])
    ba = v.evidence["build_apart"]
    assert ba["order"] == "sealed" and ba["sealed_before_import"] is True, ba
    assert v.evidence["build"]["builds"] + v.evidence["build"]["cache_hits"] >= 1  # in the build worker
    assert v.evidence["build_judging_worker"]["builds"] == 0  # the judging worker only loaded it
    assert v.evidence.get("judging_workers_started_beside") == "build worker", v.evidence  # overlapped


def test_plan_warms_jit_at_call_sources_apart(monkeypatch):
    monkeypatch.delenv("KH_BUILD_APART", raising=False)
    assert buildphase.plan("import torch\n", "cpu")[0] == "sealed"
    assert buildphase.plan("import triton\n", "cpu")[0] == "warm-apart"
    assert buildphase.plan("fn = torch.compile(f)\n", "cpu")[0] == "warm-apart"
    assert buildphase.plan("from torch import compile\nfn = compile(f)\n", "cpu")[0] == "warm-apart"
    assert buildphase.plan("import re\nPAT = re.compile('x')\n", "cpu")[0] == "sealed"  # not a JIT
    assert buildphase.plan("import triton\n", "cuda")[0] == "warm-apart"
    inline = "from torch.utils.cpp_extension import load_inline\n"
    assert buildphase.plan(inline, "cuda")[0] == "sealed"
    monkeypatch.setenv("KH_BUILD_APART", "cpu")  # the operator's switch
    assert buildphase.plan(inline, "cuda")[0] == "late"
    assert buildphase.plan(inline, "cpu")[0] == "sealed"
    assert buildphase.plan("import triton\n", "cuda")[0] == "late"


def test_in_the_earlier_order_the_same_probe_gets_through(cache, monkeypatch):
    """The control: the judging worker builds and imports with its build dir writable and exec
    allowed until the warm-up ends, so both probes succeed and forward answers wrong."""
    monkeypatch.setattr(buildphase, "plan", lambda source, device: ("late", "forced by the test"))
    v = evaluate(load_task(RELU), PROBE, _cfg(build_dir=cache))
    assert v.status is Status.INCORRECT, (v.status, v.rule, v.message)
    assert v.evidence["build_apart"]["order"] == "late"


def _jit(name: str, cache: str):
    src = (HERE / "candidates" / f"{name}.py").read_text()
    return evaluate(load_task(RELU), src, _cfg(build_dir=cache, candidate_name=f"{name}.py"))


def test_a_source_that_compiles_at_its_first_call_is_warmed_apart_and_judged_sealed(cache):
    """The first calls run in a throwaway worker (both probes succeed there, unjudged); the
    judging worker is sealed before the import and finds the build in its read-only dir."""
    v = _jit("build_apart_jit_probe", cache)
    assert v.status is Status.VALID, (v.status, v.rule, v.message, v.logs[-2000:])
    ba = v.evidence["build_apart"]
    assert ba["order"] == "warm-apart" and ba["sealed_before_import"] is True, ba
    # valid means the probes failed in the judging worker, which also means it built nothing:
    # a build there needs the compiler (exec) and a writable build dir
    assert v.durations_s["warm_apart"] > 0
    # the judging workers were started while the warm-apart worker ran, and still found its build,
    # written after they were up, in their read-only dir
    assert v.evidence.get("judging_workers_started_beside") == "warm-apart worker", v.evidence


def test_a_first_call_that_needs_a_process_even_when_cached_is_judged_again_late(cache):
    """Honest, but its first call starts a tool: refused in the sealed judging worker, so the
    judgement is redone in the late order instead of failing the candidate for it."""
    v = _jit("build_apart_jit_needs_exec", cache)
    assert v.status is Status.VALID, (v.status, v.rule, v.message, v.logs[-2000:])
    ba = v.evidence["build_apart"]
    assert ba["order"] == "late" and "sealed warm-up failed" in ba["why"], ba
    assert any("runtime_error" in f for f in ba["sealed_failures"]), ba


def test_an_extension_built_in_forward_moves_from_sealed_to_warm_apart(cache):
    """No first-call marker in the source: planned sealed, the judging worker's first call cannot
    build, and the judgement goes on in the warm-apart order instead of failing an honest kernel."""
    v = _jit("build_apart_lazy_relu", cache)
    assert v.status is Status.VALID, (v.status, v.rule, v.message, v.logs[-2000:])
    ba = v.evidence["build_apart"]
    assert ba["order"] == "warm-apart" and ba["sealed_before_import"] is True, ba
    assert len(ba["sealed_failures"]) == 1 and ba["sealed_failures"][0].startswith("sealed: runtime_error"), ba
