"""Each verdict status on CPU, end to end through the process backend."""

from __future__ import annotations

import pytest

from sandbox import rules
from sandbox.verdict import Mode, Status, Verdict
from tests.evaluator.conftest import CPP_ADD, TORCH_ADD, python_candidate, run


@pytest.fixture(scope="module")
def cache_dir():
    """The shared default build cache (other tests and the red team build the same kernel)."""
    return None


@pytest.fixture(scope="module")
def first_cpp(cache_dir):
    return run(CPP_ADD, build_dir=cache_dir, timeout_s=900)


def test_honest_cpp_kernel_is_valid_with_timings(first_cpp):
    v = first_cpp
    assert v.status is Status.VALID, (v.message, v.logs)
    assert v.host_timers is True
    assert len(v.trials) >= 6 and all(t.passed for t in v.trials)
    assert {"candidate", "eager"} <= set(v.timings)
    m = v.timings["candidate"]
    assert m.n >= 20 and m.ci_low_us <= m.median_us <= m.ci_high_us
    assert "eager" in v.speedups and v.speedups["eager"].p_value is not None
    assert v.environment["isolation"] in ("jail", "jail-setuid")  # this machine can make a jail
    assert v.environment["isolation_layers"]["pid_namespace"] is True


def test_verdict_json_round_trip(first_cpp):
    again = Verdict.from_json(first_cpp.to_json())
    assert again == first_cpp


def test_build_cache_second_evaluation_does_not_recompile(first_cpp, cache_dir):
    """The property, not a duration: the second judgement's workers built nothing and loaded the
    first one's build from the cache."""
    b = first_cpp.evidence["build"]
    assert b["builds"] + b["cache_hits"] == 1  # built once, or found built
    assert b["lite"] == b["lite_fallbacks"] == b["slim"] == b["slim_fallbacks"] == 0  # the CUDA cuts leave C++ alone
    second = run(CPP_ADD, build_dir=cache_dir)
    assert second.status is Status.VALID, second.message
    build = dict(second.evidence["build"])
    build.pop("pch_prepare", None)  # the precompiled header's own making (its tests: test_pch.py), not the cache's
    assert build == {"builds": 0, "cache_hits": 1, "lite": 0, "lite_fallbacks": 0, "slim": 0, "slim_fallbacks": 0,
                     "pch": 0}
    assert second.durations_s["compile"] == 0.0


COMPILE_ERROR_SRC = """
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# no_implicit_headers: the compiler fails in milliseconds instead of parsing torch's headers
ext = load_inline(name="broken", cpp_sources="int add(int a, int b) { return a + b }",
                  functions=None, no_implicit_headers=True)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add(a, b)
"""


def test_compile_error_reports_compiler_log(cache_dir):
    v = run(COMPILE_ERROR_SRC, build_dir=cache_dir, timeout_s=900)
    assert v.status is Status.COMPILE_ERROR, v.message
    assert "error" in v.logs.lower()


def test_exception_in_forward_is_runtime_error():
    v = run(python_candidate("        raise ValueError('boom in forward')"))
    assert v.status is Status.RUNTIME_ERROR
    assert "boom in forward" in v.logs


def test_wrong_values_are_incorrect_with_failing_trial():
    v = run(python_candidate("        return a + b + 0.01"), allow_torch_ops=True)
    assert v.status is Status.INCORRECT and v.rule == rules.TOLERANCE
    assert v.trials and not v.trials[-1].passed and v.trials[-1].max_abs_err == pytest.approx(0.01, rel=1e-3)
    assert "trial 0" in v.message


def test_torch_computing_the_result_is_rejected():
    v = run(TORCH_ADD)
    assert v.status is Status.REJECTED and v.rule == rules.TORCH_FALLBACK
    assert "aten::add" in v.message


def test_allow_torch_ops_is_recorded_and_scrubs_secrets(monkeypatch):
    # the candidate fails if the parent's secrets or home reach its environment, or if a
    # torch.compile in its worker would start inductor's pool of compile processes (session 23:
    # that pool, started in every final-mode reference worker under the GPU hold, cost 8-10 CPU s)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-must-not-leak")
    monkeypatch.setenv("HF_TOKEN", "hf-must-not-leak")
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "8")  # the parent's own setting does not pass
    prelude = (
        "leaked = [k for k in os.environ if 'KEY' in k or 'TOKEN' in k]\n"
        "assert not leaked, f'secrets leaked: {leaked}'\n"
        "assert os.environ['HOME'] != os.path.expanduser('~root'), 'HOME not scrubbed'\n"
        "assert os.environ.get('TORCHINDUCTOR_COMPILE_THREADS') == '1', 'inductor would compile in a pool'\n"
    )
    v = run(python_candidate("        return a + b", prelude), allow_torch_ops=True)
    assert v.status is Status.VALID, (v.message, v.logs)
    assert v.allow_torch_ops is True


def test_modifying_inputs_is_incorrect():
    v = run(python_candidate("        out = a + b\n        a.zero_()\n        return out"), allow_torch_ops=True)
    assert v.status is Status.INCORRECT and v.rule == rules.INPUTS_MODIFIED


def test_wrong_shape_is_output_type():
    v = run(python_candidate("        return (a + b)[:-1]"), allow_torch_ops=True)
    assert v.status is Status.INCORRECT and v.rule == rules.OUTPUT_TYPE


def test_static_scan_rejects_before_running():
    v = run(python_candidate("        return a + b", "import subprocess"))
    assert v.status is Status.REJECTED and v.rule == rules.SUBPROCESS
    assert v.evidence.get("static_scan") is True
    assert "environment" not in v.to_dict() or not v.environment  # no worker was started


def test_final_mode_hidden_shape_catches_hardcoded_size():
    # correct at the public small shape (N=1024), wrong at the hidden small_extra0 (N=1029)
    body = "        if a.numel() != 1024:\n            return a - b\n        return a + b"
    v = run(python_candidate(body), allow_torch_ops=True, mode=Mode.FINAL, seed=None)
    assert v.status is Status.INCORRECT and v.rule == rules.HIDDEN_SHAPE, v.message
    assert any(t.shape_label == "small_extra0" for t in v.trials)


def test_nan_output_is_nonfinite():
    v = run(python_candidate("        out = a + b\n        out[3] = float('nan')\n        return out"),
            allow_torch_ops=True)
    assert v.status is Status.INCORRECT and v.rule == rules.NONFINITE


def test_an_output_far_larger_than_the_reference_is_rejected_before_anything_loads_it():
    # a second 256 MB output: bounded by the reference's output sizes before the reference
    # worker loads the file (which would otherwise cost it the memory)
    body = "        return a + b, torch.zeros(64 * 2**20)"
    v = run(python_candidate(body), allow_torch_ops=True)
    assert v.status is Status.REJECTED and v.rule == rules.OUTPUT_TYPE, v.message
    assert "bytes" in v.message and not v.trials


def test_outputs_are_compared_in_the_reference_worker_not_the_parent(monkeypatch):
    # the parent must not deserialize candidate outputs at all (sandbox/check/refcheck.py does)
    import torch

    def no_load(*a, **k):
        raise AssertionError("the parent loaded a worker's output")

    monkeypatch.setattr(torch, "load", no_load)
    v = run(python_candidate("        return a + b + 0.01"), allow_torch_ops=True)
    assert v.status is Status.INCORRECT and v.rule == rules.TOLERANCE
    assert v.trials[-1].max_abs_err == pytest.approx(0.01, rel=1e-3)
