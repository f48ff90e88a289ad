"""The arena in GPU memory (sandbox/worker/devarena.py, issue 27 goal 1): on a GPU a call's inputs
and outputs stay on the device, the reference worker makes the regions and exports the
candidate's two as fds, the candidate maps its input region read-only, and a judgement that
cannot have device memory falls back to the host arena. The parent's bookkeeping and the fd
channel are checked here on any machine; the device paths on the lent GPU."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
import torch

from sandbox.verdict import Status
from sandbox.worker import arenasetup, channel
from sandbox.worker.arena import Arena
from tests.evaluator.conftest import run

BIG = Path(__file__).resolve().parent / "tasks" / "big_out.py"
AFFINE = '''
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0 + 1.0
'''


def test_a_device_arena_keeps_sizes_and_the_exported_fds_not_memfds():
    a = Arena(device=True)
    assert a.fds == {} and a.total(("cand_in", "out")) == 0  # no host pages for the watchdog to allow
    assert a.ensure("out", 5) and a.sizes["out"] == 2 << 20 and not a.ensure("out", 100)
    r1, w1 = os.pipe()
    a.adopt(["out"], [r1])
    assert a.fds["out"] == r1 and a.gen["out"] == 1 and a.gen["cand_in"] == 0
    r2, w2 = os.pipe()
    a.adopt(["out"], [r2])  # made again (grown): the old fd is closed, the generation moves
    assert a.gen["out"] == 2 and a.fds["out"] == r2
    with pytest.raises(OSError):
        os.fstat(r1)
    a.close()
    with pytest.raises(OSError):
        os.fstat(r2)
    for fd in (w1, w2):
        os.close(fd)


def test_the_parent_takes_exactly_the_fds_that_follow_a_reply_and_refuses_a_wrong_count():
    p, c = socket.socketpair()
    try:
        r, w = os.pipe()
        socket.send_fds(c, [b"F"], [r, w])
        got = channel.recv_fds(p, 2, None)
        assert len(got) == 2 and all(os.fstat(fd) for fd in got)
        for fd in (r, w, *got):
            os.close(fd)
        r, w = os.pipe()
        socket.send_fds(c, [b"F"], [r])
        with pytest.raises(channel.ChannelError, match="expected 2 fds"):
            channel.recv_fds(p, 2, None)
        for fd in (r, w):
            os.close(fd)
    finally:
        p.close()
        c.close()


def test_only_a_gpu_judgement_asks_for_device_memory(monkeypatch):
    monkeypatch.delenv("KH_DEVICE_ARENA", raising=False)
    assert arenasetup.wanted("cuda") and arenasetup.wanted("cuda:1") and not arenasetup.wanted("cpu")
    monkeypatch.setenv("KH_DEVICE_ARENA", "0")
    assert not arenasetup.wanted("cuda")


def test_a_cpu_judgement_uses_the_host_arena():
    v = run(AFFINE, task=BIG, allow_torch_ops=True, profile="tiny")
    assert v.status is Status.VALID, (v.message, v.logs)
    assert v.evidence["arena"]["device"] is False and "arena_device_fallback" not in v.evidence


# -- on the GPU ---------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
GPU = dict(device="cuda", profile="p256m", allow_torch_ops=True, max_timing_s=0.5, feedback_timing_s=0.5,
           timeout_s=600)

# finds the worker's own mapping of the arena (sandbox/worker/arena.py Mapping) and writes into
# the input region the reference staged: on the device it is mapped read-only (the write faults),
# and where it is not, the reference finds the inputs changed
WRITES_CAND_IN = '''
import gc
import torch
import torch.nn as nn

_M = [o for o in gc.get_objects() if type(o).__name__ == "Mapping" and hasattr(o, "u8")]

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        for m in _M:
            r = m.u8.get("cand_in")
            if r is not None:
                r[:4096].fill_(0)
        return x * 2.0 + 1.0
'''


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("device_arena", ["1", "0"])
def test_a_gpu_judgement_is_the_same_with_its_data_on_the_device_or_the_host(monkeypatch, device_arena):
    monkeypatch.setenv("KH_DEVICE_ARENA", device_arena)
    v = run(AFFINE, task=BIG, **GPU)
    assert v.status is Status.VALID, (v.message, v.logs)
    arena = v.evidence["arena"]
    assert arena["device"] is (device_arena == "1"), (arena, v.evidence.get("arena_device_fallback"))
    assert "arena_device_fallback" not in v.evidence
    if device_arena == "1":  # the candidate maps its input region read-only
        assert arena["readonly"] == {"cand_in": True, "out": False}, arena


@pytest.mark.gpu
@needs_gpu
def test_a_candidate_writing_its_device_input_region_is_not_valid():
    v = run(WRITES_CAND_IN, task=BIG, **GPU)
    assert v.evidence["arena"]["device"] is True
    assert v.status is not Status.VALID, (v.status, v.rule, v.message)
