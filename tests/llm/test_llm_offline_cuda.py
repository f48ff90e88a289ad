"""The offline model's CUDA kernels for the smoke ops are valid on a GPU, and a variant's
tunables really change the launch (GPU only: run centrally on the lent GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness.llm.offline.analyze import analyze
from harness.llm.offline.render import GRIDS, Variant, render
from sandbox.evaluate import EvalConfig, evaluate
from sandbox.verdict import Mode, Status

pytestmark = [pytest.mark.gpu, pytest.mark.slow,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

ROOT = Path(__file__).resolve().parents[2] / "reference_ops"
SMOKE = {"relu": "activation/relu", "softmax": "softmax/softmax", "sum_dim": "reduction/sum_dim",
         "matmul_square": "matmul/matmul_square", "layer_norm": "normalization/layer_norm"}
FEEDBACK = EvalConfig(mode=Mode.FEEDBACK, device="cuda", max_timing_s=2.0)


@pytest.mark.parametrize("op", sorted(SMOKE))
def test_offline_cuda_kernel_for_smoke_op_is_valid_on_gpu(op):
    path = ROOT / f"{SMOKE[op]}.py"
    spec = analyze(path.read_text())
    blocks, unrolls = GRIDS[(spec.family, "cuda")]
    code = render(spec, Variant("cuda", blocks[len(blocks) // 2], unrolls[-1]))
    verdict = evaluate(path, code, FEEDBACK)
    assert verdict.status is Status.VALID, (verdict.status, verdict.rule, verdict.message, verdict.logs[-2000:])


def test_offline_cuda_wrong_result_variant_is_incorrect_on_gpu():
    path = ROOT / "reduction/sum_dim.py"
    code = render(analyze(path.read_text()), Variant("cuda", 256, 1, fault="wrong_result"))
    assert evaluate(path, code, FEEDBACK).status is Status.INCORRECT
