"""The two rule sets (issue 15 item 3), judged for real on CPU (real jailed workers, real C++
builds, shared through the build cache's trusted tier): ``strict`` refuses any torch compute in
forward; ``partial`` lets torch run beside the candidate's own kernel but requires that at least
one compute op of the reference is replaced, and reports the share of time in its own code."""

from __future__ import annotations

import pytest

from sandbox import rules as R
from sandbox.evaluate import EvalConfig, evaluate
from sandbox.intake.task import load_task
from sandbox.rules.partial import families, family
from sandbox.verdict import Status, Verdict

from .redteam import Case, config, describe, warm_build_cache

PARTIAL = Case("partial_cpu_gemm_in_torch", "gemm_bias_relu", (Status.VALID,))
NOOP = Case("partial_cpu_all_torch_noop", "gemm_bias_relu", (Status.REJECTED,), (R.NO_REPLACEMENT,))
HONEST = Case("honest_cpu_gemm_bias_relu", "gemm_bias_relu", (Status.VALID,))


@pytest.fixture(scope="module", autouse=True)
def _built():
    for c in (PARTIAL, NOOP, HONEST):
        warm_build_cache(c.candidate)


def judge(case: Case, rules: str) -> Verdict:
    v = evaluate(load_task(case.task_path()), case.source(), config(case, rules=rules))
    assert v.rules == rules  # every verdict says which rule set judged it
    return v


def test_level2_partial_solution_is_rejected_under_strict_and_valid_under_partial():
    strict = judge(PARTIAL, "strict")
    assert (strict.status, strict.rule) == (Status.REJECTED, R.TORCH_FALLBACK), describe(strict)
    assert "aten::matmul" in strict.message
    v = judge(PARTIAL, "partial")
    assert v.status is Status.VALID, describe(v)
    ev = v.evidence["partial"]
    # nn.Linear's tree holds addmm (matmul and the bias add); torch.relu's holds clamp_min (relu)
    assert (ev["reference_ops"], ev["torch_ops"], ev["replaced"]) == (
        {"matmul": 1, "add": 1, "relu": 1}, {"matmul": 1}, {"add": 1, "relu": 1})
    # every counted call: torch's GEMM only, and its own bias+relu kernel called
    assert ev["calls"] and all(c["torch_ops"] == {"matmul": 1} and c["own_code"] for c in ev["calls"]), ev
    assert 0.0 < v.evidence["custom_share"] < 1.0  # its bias+relu kernel and the torch GEMM both took time
    assert "host time" in v.evidence["custom_share_basis"]
    assert 0.0 < v.evidence["custom_share_counted"]["share"] < 1.0


def test_every_reference_op_in_torch_beside_a_do_nothing_kernel_is_rejected_under_partial():
    v = judge(NOOP, "partial")
    assert (v.status, v.rule) == (Status.REJECTED, R.NO_REPLACEMENT), describe(v)
    assert v.evidence["partial"]["replaced"] == {}


def test_an_honest_fully_custom_kernel_is_valid_under_both_rule_sets():
    for rules in ("strict", "partial"):
        v = judge(HONEST, rules)
        assert v.status is Status.VALID, describe(v)
        assert v.evidence["custom_share"] > 0.5
    assert v.evidence["partial"]["torch_ops"] == {}


# -- fast: the definitions the rule rests on ------------------------------------------------------
def test_op_families_make_spellings_of_one_computation_equal():
    assert {family(o) for o in ("aten::linear", "aten::addmm", "aten::mm", "aten::matmul", "aten::bmm")} == {"matmul"}
    assert family("aten::conv2d") == family("aten::_convolution") == "conv"
    assert family("aten::relu_") == "relu" and family("aten::__and__") == "__and__"
    assert families({"aten::linear": 1, "aten::relu": 2, "aten::empty": 3, "aten::t": 1}) == {"matmul": 1, "relu": 2}


def test_an_unknown_rule_set_is_refused_and_old_verdicts_read_as_strict():
    with pytest.raises(ValueError, match="--rules"):
        EvalConfig(rules="lenient")
    v = Verdict(status=Status.VALID, rules="partial")
    assert Verdict.from_json(v.to_json()).rules == "partial"
    d = v.to_dict()
    del d["rules"]  # a verdict written before rule sets existed
    assert Verdict.from_dict(d).rules == "strict"


def test_harness_eval_takes_rules_and_prints_the_rule_set_and_custom_share():
    import json

    from click.testing import CliRunner

    from harness.cli import main

    from .redteam import CANDIDATES

    args = ["eval", str(PARTIAL.task_path()), str(CANDIDATES / f"{PARTIAL.candidate}.py"), "--device", "cpu",
            "--mode", "feedback", "--max-timing-s", "0.3", "--seed", "7"]
    res = CliRunner().invoke(main, [*args, "--rules", "partial", "--json"])
    assert res.exit_code == 0, res.output
    v = json.loads(res.output[res.output.index("{"):])
    assert v["rules"] == "partial" and v["status"] == "valid" and "custom_share" in v["evidence"]
    res = CliRunner().invoke(main, [*args, "--rules", "lenient"])
    assert res.exit_code == 2 and "--rules" in res.output
