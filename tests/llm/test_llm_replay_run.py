"""A run recorded once and replayed (``--llm replay:RUN_ID``) produces identical candidates
with no model at all; the offline model drives every built-in method end to end. The
sandboxed evaluator is replaced by a deterministic fake judge here (speed); the offline
kernels themselves are judged for real in test_llm_offline_kernels.py."""

from __future__ import annotations

import hashlib

import pytest

from harness.llm.factory import spec_is_offline
from harness.methods import registry
from harness.methods.base import Budget
from harness.runner import RunConfig, run
from harness.store import Results
from sandbox.verdict import Measurement, Speedup, Status, Verdict


def judge(task, source, config):
    """Valid with a runtime fixed by the source, unless the offline model broke it on purpose."""
    if "WRONG = 1" in source:
        return Verdict(status=Status.INCORRECT, mode=config.mode, task=task.name, message="off by one")
    if "extensions.h" in source:
        return Verdict(status=Status.COMPILE_ERROR, mode=config.mode, task=task.name, message="no header")
    rt = 10.0 + int(hashlib.sha256(source.encode()).hexdigest(), 16) % 40
    eager = Measurement(50.0, 49.0, 51.0, 30, True)
    return Verdict(status=Status.VALID, mode=config.mode, task=task.name, device=config.device,
                   timings={"candidate": Measurement(rt, rt - 1, rt + 1, 30, True), "eager": eager},
                   speedups={"eager": Speedup("eager", 50 / rt, 50 / (rt + 1), 50 / (rt - 1), 0.001, True)})


def _candidates(results, run_id):
    r = Results.open(results)
    rows = r.store.query("SELECT op, trial, source, operator FROM candidates WHERE run_id=? ORDER BY op, trial",
                         (run_id,))
    r.close()
    return [tuple(x) for x in rows]


@pytest.mark.parametrize("method", sorted(registry.BUILTINS))
def test_replayed_run_produces_identical_candidates(method, tmp_path):
    common = dict(method=method, ops=["relu", "sum_dim"], budget=Budget(evaluations=6), seed=3,
                  results=tmp_path, progress=False)
    first = run(RunConfig(llm="offline", run_id="live", **common), judge=judge)
    assert not first.failed, first.table()
    recorded = _candidates(tmp_path, "live")
    assert recorded and any(src for _, _, src, _ in recorded)
    again = run(RunConfig(llm="replay:live", run_id="replayed", **common), judge=judge)
    assert not again.failed, again.table()
    assert _candidates(tmp_path, "replayed") == recorded
    r = Results.open(tmp_path)
    assert spec_is_offline("replay:live", r.store)  # a replay of an offline run is still offline
    assert r.store.query("SELECT MIN(offline) FROM llm_calls WHERE run_id='replayed'")[0][0] == 1
    n_live = r.store.query("SELECT COUNT(*) FROM llm_calls WHERE run_id='live'")[0][0]
    n_again = r.store.query("SELECT COUNT(*) FROM llm_calls WHERE run_id='replayed'")[0][0]
    r.close()
    assert n_live == n_again > 0
