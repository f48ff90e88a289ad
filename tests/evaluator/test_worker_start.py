"""A worker that does not come up is a problem of the machine or the jail, never a verdict:
no candidate code has run in it (sandbox/judge.py start). And a caller's script in the temp dir
does not stop the workers from starting (sandbox/isolation/process.py code_paths)."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.isolation.base import SandboxUnavailable
from sandbox.isolation.process import code_paths
from sandbox.verdict import Mode, Status
from tests.adversarial.redteam import TASKS, Case, config, describe

TMP = os.path.realpath(tempfile.gettempdir())


def test_the_temp_dir_on_sys_path_is_not_bound_into_the_jail(monkeypatch):
    monkeypatch.setattr(sys, "path", [TMP, *sys.path])
    assert TMP not in code_paths()


@pytest.mark.slow
def test_a_script_run_from_the_temp_dir_gets_real_verdicts(monkeypatch):
    """Before: both workers were killed at start, and attribution blamed the candidate
    (rejected sandbox.interference) because the reference alone, under other limits, started."""
    monkeypatch.setattr(sys, "path", [TMP, *sys.path])
    case = Case("honest_cpu_relu", "relu", (Status.VALID,), mode=Mode.FEEDBACK)
    v = evaluate(load_task(TASKS / "relu.py"), case.source(), config(case, seed=3))
    assert v.status is Status.VALID, describe(v)


@pytest.mark.slow
def test_a_worker_that_cannot_start_is_a_setup_error_not_a_verdict():
    """A memory limit no Python process with torch fits in: the workers die while starting."""
    case = Case("honest_cpu_relu", "relu", (Status.VALID,), mode=Mode.FEEDBACK)
    with pytest.raises(SandboxUnavailable, match="did not start before any candidate code ran"):
        evaluate(load_task(TASKS / "relu.py"), case.source(), config(case, seed=3, memory_limit_gb=0.03))
