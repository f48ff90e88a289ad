"""GPU checks of the suite (run on the lent GPU: pytest -m gpu tests/suite). Not run on the CPU
machines this was written on."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
import torch

from harness.suite.checks import discriminative_failures, run_reference
from harness.suite.suites import op_paths
from sandbox.intake.task import load_task

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
SCRIPT = Path(__file__).resolve().parents[2] / "harness" / "bench" / "tools" / "gpu_baselines.py"


def _import_script():
    """Import the script as module ``gpu_baselines`` from a sys.path entry, so that its compile
    workers (spawned processes, which inherit sys.path) can import it too."""
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    return importlib.import_module("gpu_baselines")


@pytest.mark.parametrize("name", sorted(op_paths()))
def test_op_runs_on_gpu_at_default_and_extra_shapes_and_discriminates(name):
    t = load_task(op_paths()[name])
    for prof in ["default", *t.extra_profiles_for("default")]:
        run = run_reference(t, prof, seed=5, device="cuda")
        assert all(bool(torch.isfinite(o.double()).all()) for o in run.outputs), prof
        del run
        if prof == "default":
            assert not discriminative_failures(t, prof, seed=5, device="cuda"), prof
        torch.cuda.empty_cache()


def test_gpu_baselines_script_times_relu_eager_and_compiled(tmp_path):
    gb = _import_script()
    assert gb.main(["--ops", "relu", "--workers", "1", "--out", str(tmp_path)]) == 0
    (js,) = tmp_path.glob("baselines_*.json")
    (row,) = json.loads(js.read_text())["results"]
    assert row["eager_us"] >= 20, "relu's default shape must not be launch-bound"
    assert row["compile_us"], row["notes"]
    assert 1 < row["sol_mem_pct"] < 120
