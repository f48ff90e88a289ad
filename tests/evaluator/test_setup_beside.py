"""A judgement builds its two models side by side (sandbox/judge.py: setup). A KernelBench model's
constructor is CPU work inside the device hold (a level-2 task's 8192x8192 Linear: 0.7 s of serial
RNG on this box), paid at the warm-up's setup and again at the judged one's, by the reference and
by the candidate. Here both constructors sleep: built one after the other, the setups' wall time
is the sum of the two workers' setup times; side by side, about half."""

from __future__ import annotations

from sandbox.verdict import Status
from tests.evaluator.conftest import ADD_TASK, run

SLEEP_S = 0.8

CANDIDATE = f'''
import time
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        time.sleep({SLEEP_S})

    def forward(self, a, b):
        return a + b
'''


def test_the_reference_and_the_candidate_are_set_up_side_by_side(tmp_path):
    task = tmp_path / "slow_init_add.py"
    task.write_text(ADD_TASK.read_text().replace(
        "        super().__init__()\n", f"        super().__init__()\n        time.sleep({SLEEP_S})\n", 1)
        .replace("import torch\n", "import time\nimport torch\n", 1))
    v = run(CANDIDATE, task=task, allow_torch_ops=True)
    assert v.status is Status.VALID, (v.message, v.logs)
    req = v.evidence["requests"]
    n, wall = v.evidence["setups"]
    (nr, ref_s), (nc, cand_s) = req["reference.setup"], req["candidate.setup"]
    assert n == nr == nc >= 2  # the warm-up's and the judged one's
    assert ref_s >= n * SLEEP_S and cand_s >= n * SLEEP_S
    # one after the other the wall would be ref_s + cand_s (>= 2 n SLEEP_S); side by side about half
    assert wall < 0.75 * (ref_s + cand_s), (wall, ref_s, cand_s)
