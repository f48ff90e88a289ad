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


_NO_INDUCTOR = r"""
import sys, tempfile
from sandbox.worker.main import Worker
from sandbox.worker import warmup
from sandbox.rules import hooks
d = tempfile.mkdtemp()
w = Worker("candidate", d, "cpu", d, [])  # the warm-up ran a profiler session
assert "torch._inductor" not in sys.modules and "torch._dynamo" not in sys.modules, "the warm-up imported Inductor"
import torch
from torch.profiler import ProfilerActivity
with warmup.profile_class()(activities=[ProfilerActivity.CPU]) as prof:
    torch.ones(4).add_(1)
assert any(e.name == "aten::add_" for e in prof.events()), "the session recorded nothing"
assert "torch._inductor" not in sys.modules
assert hasattr(torch, "_dynamo") is True  # the lazy modules still import when asked for
h = hooks.Hooks(torch)
h.freeze()
f = torch.compile(lambda x: x.relu() + 1)  # what a candidate using torch.compile does, after the freeze
assert f(torch.randn(8)).shape == (8,)
assert h.found() == [] and h.dispatch_changed() == [], (h.found(), h.dispatch_changed())
with warmup.profile_class()(activities=[ProfilerActivity.CPU]) as prof:  # Inductor imported: stock path
    torch.ones(4).add_(1)
print("ok")
"""


@pytest.mark.slow
def test_a_worker_starts_without_importing_inductor_and_a_later_import_trips_no_hook():
    """torch.profiler's session start imports Inductor and Dynamo through torch's lazy modules:
    3.8 of 8.8 s of every worker's start on 2 cores (sandbox/worker/warmup.py profile_class)."""
    import subprocess

    r = subprocess.run([sys.executable, "-c", _NO_INDUCTOR], capture_output=True, text=True, timeout=600,
                       cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout[-2000:] + r.stderr[-3000:]
