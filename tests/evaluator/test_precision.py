"""fp32 stays fp32 in both workers: TF32 is off for matmuls and cuDNN convolutions.

cuDNN convolutions default to TF32 on Ampere and later; with it on, the reference of an fp32
conv is ~1e-3 off, an exact fp32 kernel fails atol=1e-4 (seen on the H100, 2026-11-22) and a
TF32 downcast (cheat 15) passes. The flags are plain settings on CPU too, so the test reads
them where the reference and the candidate run: any worker with TF32 on shifts its output.
"""

from __future__ import annotations

from sandbox.verdict import Status
from tests.evaluator.conftest import python_candidate, run

TASK = '''
import torch
import torch.nn as nn

N = 4096
META = {"category": "elementwise", "dtype": "float32", "flops": "N", "bytes": "12*N"}
SHAPES = {"small": {"N": 1024}, "extra": [{"N": 333}]}


def _tf32_on():
    return torch.backends.cudnn.allow_tf32 or torch.backends.cuda.matmul.allow_tf32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b + (1.0 if _tf32_on() else 0.0)


def get_inputs():
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs():
    return []
'''

FLAGS = "        tf32 = torch.backends.cudnn.allow_tf32 or torch.backends.cuda.matmul.allow_tf32\n"


def _task(tmp_path):
    p = tmp_path / "add_tf32.py"
    p.write_text(TASK)
    return p


def test_reference_and_candidate_run_with_tf32_off(tmp_path):
    src = python_candidate(FLAGS + "        return a + b + (2.0 if tf32 else 0.0)")
    v = run(src, task=_task(tmp_path), allow_torch_ops=True)
    assert v.status is Status.VALID, (v.status, v.rule, v.message)


def test_a_candidate_that_turns_tf32_on_is_judged_against_the_fp32_reference(tmp_path):
    # control: the flag is visible in the output, so this test could fail
    src = python_candidate("        torch.backends.cudnn.allow_tf32 = True\n" + FLAGS
                           + "        return a + b + (2.0 if tf32 else 0.0)")
    v = run(src, task=_task(tmp_path), allow_torch_ops=True)
    assert v.status is Status.INCORRECT, (v.status, v.rule, v.message)
