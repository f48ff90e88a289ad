"""Reference workers started ahead of the judgements that take them (sandbox/lane/spares.py,
harness/executors/sparekeeper.py), with the real judge and real workers, on the CPU (turned on
explicitly: by default only GPU lanes in final mode keep spares)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.executors.local import LocalExecutor
from sandbox.contract import EvalConfig, Status, load_task, spare_references

REPO = Path(__file__).resolve().parents[2]
RELU = REPO / "reference_ops" / "activation" / "relu.py"
ALIAS = '''
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)  # {}
'''


def test_judgements_take_spare_reference_workers_and_the_executor_closes_the_rest(tmp_path):
    task = load_task(RELU)
    cfg = EvalConfig(device="cpu", profile="small", allow_torch_ops=True, build_dir=str(tmp_path / "cache"))
    before = spare_references.stats()
    with LocalExecutor(compile_workers=0, timing_devices=["cpu"], compile_cuts=False, judges_per_device=1,
                       spare_references=True) as ex:
        futs = [ex.submit(task, ALIAS.format(k), cfg) for k in range(2)]
        verdicts = [f.result(timeout=300) for f in futs]
    after = spare_references.stats()
    assert [v.status for v in verdicts] == [Status.VALID] * 2, [v.message for v in verdicts]
    took = [v.evidence.get("reference_worker") for v in verdicts]
    assert "spare" in took, took  # the second at least: its reference started while the first was judged
    assert after["taken"] - before["taken"] == took.count("spare")
    # nothing left in the pool once the executor closed: every spare it started was taken or closed
    assert after["started"] - before["started"] == took.count("spare") + after["closed"] - before["closed"] \
        + after["expired"] - before["expired"], (before, after)
    assert all(spare_references.count(k) == 0 for k in ex._spare_keys)


def test_spares_are_off_by_default_on_a_cpu_and_with_a_stand_in_judge():
    with LocalExecutor(compile_workers=0, timing_devices=["cpu"], compile_cuts=False) as ex:
        assert ex._spare_devices == []
    with LocalExecutor(compile_workers=0, timing_devices=["cuda:0"], compile_cuts=False,
                       judge_fn=lambda *a: None) as ex:
        assert ex._spare_devices == []


@pytest.mark.parametrize("when", ["dead in the pool", "dies once taken"])
def test_a_spare_that_died_is_replaced_by_the_judgements_own_worker(when, tmp_path, monkeypatch):
    """A spare whose process is gone is never the verdict's business: one found dead in the pool is
    closed and not taken; one that dies after it was taken (before its hello is read) is replaced
    by a worker the judgement starts itself, and the verdict says so."""
    import os
    import signal

    from sandbox.contract import evaluate
    from sandbox.lane import spares

    task = load_task(RELU)
    cfg = EvalConfig(device="cpu", profile="small", allow_torch_ops=True, build_dir=str(tmp_path / "cache"))
    key = spares.key(cfg, spares.preload_for(cfg))
    w = spares.start(cfg, spares.preload_for(cfg))
    os.kill(w.handle.pid, signal.SIGKILL)
    w.handle.wait(30)
    if when == "dead in the pool":
        spares.put(key, w)
    else:
        real = spares.take
        monkeypatch.setattr(spares, "take", lambda k: w if k == key else real(k))
    v = evaluate(task, ALIAS.format(when), cfg)
    assert v.status is Status.VALID, v.message
    if when == "dead in the pool":
        assert "reference_worker" not in v.evidence and spares.count(key) == 0
    else:
        assert v.evidence["reference_worker"].startswith("spare failed") and "its own started" in \
            v.evidence["reference_worker"], v.evidence["reference_worker"]
    w.close()
