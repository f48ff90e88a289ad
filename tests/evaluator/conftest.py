"""Shared fixtures of the evaluator tests: the tiny add task, the shared C++ add kernel, and a
fast-but-complete EvalConfig (all correctness checks; timing capped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from tests.support.evalconfig import fast_config as _fast_config

HERE = Path(__file__).resolve().parent
ADD_TASK = HERE / "tasks" / "add.py"
CPP_ADD = (HERE / "candidates" / "cpp_add.py").read_text()

TORCH_ADD = '''
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b
'''


# the suite's one fast config (tests/support/evalconfig.py), imported from here by the evaluator tests
fast_config = _fast_config


def run(source: str, task: Path = ADD_TASK, **kw):
    return evaluate(load_task(task), source, fast_config(**kw))


def python_candidate(forward_body: str, prelude: str = "") -> str:
    """A torch-only candidate whose forward is ``forward_body`` (indent 8)."""
    return f'''
import os, sys, time
import torch
import torch.nn as nn
{prelude}

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
{forward_body}
'''


@pytest.fixture(scope="session")
def add_task():
    return load_task(ADD_TASK)


class RefusedStart(Exception):
    pass


class RecordingLauncher:
    """A launcher that records the worker spec a WorkerSession built and refuses to start it:
    what the session would hand the real launcher (environment, argv), nothing started."""

    inherits_fds = True

    def __init__(self) -> None:
        self.spec = None

    def start(self, spec):
        self.spec = spec
        raise RefusedStart


def session_spec(role: str, device: str, cache_root: str | None = None, **kw):
    """The WorkerSpec a WorkerSession for ``role`` on ``device`` would start."""
    import time

    from sandbox.isolation.base import Limits
    from sandbox.worker.session import WorkerSession

    launcher = RecordingLauncher()
    with pytest.raises(RefusedStart):
        WorkerSession(role, launcher, device, cache_root, time.monotonic() + 10, Limits(), **kw)
    return launcher.spec
