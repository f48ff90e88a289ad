"""The offline model's CPU kernels for the smoke ops are judged valid by the real evaluator,
and its deliberate faults fail the way they claim. Slow: compiles C++ (4 families + 1 broken,
shared through the evaluator's build cache; the broken one stops at a missing header)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.llm.base import CallContext
from harness.llm.offline import OfflineModel
from harness.llm.offline.analyze import analyze
from harness.llm.offline.render import Variant, render
from harness.methods.reply import parse_reply
from sandbox.verdict import Status
from tests.support.judging import assert_valid, describe, judge

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2] / "reference_ops"
SMOKE = {"relu": "activation/relu", "softmax": "softmax/softmax", "sum_dim": "reduction/sum_dim",
         "matmul_square": "matmul/matmul_square", "layer_norm": "normalization/layer_norm"}
FAST = dict(max_timing_s=0.5, target_ci=0.5, timeout_s=900)  # on top of tests/support/evalconfig.py's


def _task(op: str) -> Path:
    return ROOT / f"{SMOKE[op]}.py"


@pytest.mark.parametrize("op", sorted(SMOKE))
def test_offline_cpu_kernel_for_smoke_op_is_valid(op):
    model = OfflineModel(seed=0, device="cpu", broken_rate=0.0)
    reply = model.chat([{"role": "user", "content": f"```python\n{_task(op).read_text()}```"}],
                       context=CallContext(op=op, trial=0))
    # any verdict but valid fails: the CPU parent-clock check allows 5 ms over eager's overhead
    # (sandbox/timing/measure.py GAP_FLOOR_CPU_US), which host-timer noise does not reach
    assert_valid(judge(_task(op), parse_reply(reply.text).code, **FAST))


def test_offline_wrong_result_variant_is_judged_incorrect():
    code = render(analyze(_task("sum_dim").read_text()), Variant("cpp", 4, fault="wrong_result"))
    verdict = judge(_task("sum_dim"), code, **FAST)
    assert verdict.status is Status.INCORRECT, describe(verdict)


def test_offline_compile_error_variant_is_judged_a_compile_error():
    code = render(analyze(_task("relu").read_text()), Variant("cpp", 256, 2, fault="compile_error"))
    verdict = judge(_task("relu"), code, **FAST)
    assert verdict.status is Status.COMPILE_ERROR, describe(verdict)
