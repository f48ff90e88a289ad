"""A judgement's model setups inside the device hold (sandbox/judge.py: setup). A KernelBench model's
constructor is CPU work (a level-2 task's 8192x8192 Linear: 0.7 s of serial RNG on this box), paid
at the warm-up's setup and again at the judged one's. The two workers build side by side, and
neither builds again the model it already has for the same setup (the judged setup right after the
warm-up at its profile). Here both constructors sleep SLEEP_S."""

from __future__ import annotations

import pytest

from sandbox.verdict import Status
from tests.evaluator.conftest import ADD_TASK, run

SLEEP_S = 1.0

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


def slow_init_task(tmp_path, sleep_s: float):
    """The add task whose Model's constructor sleeps ``sleep_s`` (a trusted reference's slow setup)."""
    task = tmp_path / "slow_init_add.py"
    task.write_text(ADD_TASK.read_text().replace(
        "        super().__init__()\n", f"        super().__init__()\n        time.sleep({sleep_s})\n", 1)
        .replace("import torch\n", "import time\nimport torch\n", 1))
    return task


def test_the_reference_and_the_candidate_are_set_up_side_by_side(tmp_path):
    task = slow_init_task(tmp_path, SLEEP_S)
    v = run(CANDIDATE, task=task, allow_torch_ops=True)
    assert v.status is Status.VALID, (v.message, v.logs)
    req = v.evidence["requests"]
    n, wall = v.evidence["setups"]
    (nr, ref_s), (nc, cand_s) = req["reference.setup"], req["candidate.setup"]
    assert n == 2 and nr == nc == 1  # the judged setup at the warm-up's profile reuses both models
    assert ref_s >= nr * SLEEP_S and cand_s >= nc * SLEEP_S
    # one after the other the wall would be ref_s + cand_s; side by side the reference's is hidden
    # behind the candidate's (each worker's seconds count from its own request: evidence.requests)
    assert wall < cand_s + 0.5 * ref_s, (wall, ref_s, cand_s)
    assert "setup_before_lock_s" not in v.evidence  # on a CPU the models are built inside the lock


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_the_first_models_are_built_before_the_device_is_held(tmp_path):
    """On a GPU the warm-up's first setup runs before the device lock (judge.presetup): two
    constructors sleeping 3 s each, side by side, are not in the GPU hold."""
    sleep_s = 3.0
    task = slow_init_task(tmp_path, sleep_s)
    v = run(CANDIDATE.replace(f"time.sleep({SLEEP_S})", f"time.sleep({sleep_s})"), task=task,
            allow_torch_ops=True, device="cuda")
    assert v.status is Status.VALID, (v.message, v.logs)
    assert v.evidence["setup_before_lock_s"] >= sleep_s
    req = v.evidence["requests"]
    assert req["reference.setup"][0] == req["candidate.setup"][0] == 1  # built once, before the lock
    held = v.durations_s["exclusive"] - v.durations_s["time"]
    assert held < sleep_s, v.durations_s


def test_a_reply_that_came_within_its_bound_is_not_timed_out_for_waiting_on_the_other_worker(tmp_path):
    """The candidate's setup is begun with its bound, then the parent waits for the reference's. A
    candidate that answered at once is not timed out because the reference took longer than the
    candidate's bound; one that has not answered by its bound still is (CallTimeout)."""
    import time

    from sandbox.isolation import get_launcher
    from sandbox.isolation.base import Limits
    from sandbox.worker.session import CallTimeout, WorkerSession

    slow = slow_init_task(tmp_path, 1.5)
    ws = [WorkerSession("reference", get_launcher("process"), "cpu", None, time.monotonic() + 120,
                        Limits(rss_bytes=None, wall_seconds=120)) for _ in range(2)]
    try:
        for w in ws:
            w.connect()
        fast, other = ws
        common = {"overrides": {"N": 256}, "init_seed": 1}
        pending = fast.begin("setup", bound=(time.monotonic() + 0.5, "test bound"), task_source=ADD_TASK.read_text(),
                             task_path=str(ADD_TASK), **common)
        rep, _ = other.request("setup", task_source=slow.read_text(), task_path=str(slow), **common)
        assert rep["ok"], rep
        rep, _ = pending.result()  # answered long before its bound: the 1.5 s spent on the other is not its own
        assert rep["ok"], rep
        pending = other.begin("setup", bound=(time.monotonic() + 0.5, "test bound"), task_source=slow.read_text(),
                              task_path=str(slow), **common)
        with pytest.raises(CallTimeout):
            pending.result()  # not answered by its bound: timed out as a plain request would be
    finally:
        for w in ws:
            w.close()
