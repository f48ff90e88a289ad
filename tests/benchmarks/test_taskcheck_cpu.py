"""The task check's three draws of one task in a real reference worker, on a CPU (issue 27 goal 2:
the check held a batch's first verdict back 203 s on an H200). Two ways with the same seeds:

* ``arena``: session 30's, through a judgement's requests (``call``, ``fetch``, ``check``): each
  draw's inputs staged in the host arena and read back for the call, the first draw's output
  fetched to the arena and read back for each redraw;
* ``device``: session 31's, the check's own requests (``own_call``, ``keep_own``, ``check_own``):
  nothing leaves the worker's memory.

On a GPU the arena is host memory, so the first way crossed the bus; on a CPU both are memory
copies, so this measures the copies' share only (a lower bound of the GPU's gain)."""

from __future__ import annotations

import time

import pytest

from sandbox.isolation import Limits, get_launcher
from sandbox.worker.arena import Arena
from sandbox.worker.session import WorkerSession

TASK = """
import torch
import torch.nn as nn

N = 16 * 2**20  # 64 MiB of float32 in, as much out


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []
"""


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    path = tmp_path_factory.mktemp("taskcheck") / "relu64.py"
    path.write_text(TASK)
    a = Arena()
    w = WorkerSession("reference", get_launcher("process"), "cpu", None, time.monotonic() + 600,
                      Limits(rss_bytes=None, wall_seconds=600))
    w.connect()
    w.attach_arena(a, ("ref_in", "out"))
    yield w, a, str(path)
    w.close()
    a.close()


def _draws(w, a, path: str, way: str) -> bool:
    """The three draws; True when the redraws differ from the first (the task is not degenerate)."""
    source = open(path).read()
    first: dict = {}
    changed = []
    for k in range(3):
        rep, _ = w.request("setup", task_source=source, task_path=path, overrides={}, init_seed=k, compile=False)
        assert rep["ok"], rep
        if way == "device":
            rep, _ = w.request("own_call", seed=100 + k, target="eager")
            assert rep["ok"], rep
            rep, _ = w.request("keep_own") if k == 0 else w.request("check_own", atol=1e-4, rtol=1e-4)
        else:
            rep, _ = w.request("call", seed=100 + k, target="eager")
            assert rep["ok"], rep
            if k == 0:
                a.ensure("out", sum(rep["out_bytes"]) + 2**20)
                rep, _ = w.request("fetch")
                first = {"entries": rep["entries"], "devices": rep.get("devices", [])}
            else:
                rep, _ = w.request("check", **first, atol=1e-4, rtol=1e-4, against="last", keep=None,
                                   trivial=False, limit=None)
        assert rep["ok"], rep
        if k:
            changed.append(not rep["passed"])
    return all(changed)


@pytest.mark.parametrize("way", ["arena", "device"])
def test_three_draws_of_a_64mib_task(benchmark, worker, way):
    w, a, path = worker
    assert benchmark.pedantic(_draws, args=(w, a, path, way), rounds=3, warmup_rounds=1)
