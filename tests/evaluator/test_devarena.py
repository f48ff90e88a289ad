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
from tests.evaluator.test_datapath import BIG, BIG_CANDIDATE

AFFINE = BIG_CANDIDATE  # x * 2 + 1, torch only: the data path is what is judged


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
    monkeypatch.setenv("KH_DEVICE_ARENA", "force")
    assert arenasetup.wanted("cpu")


def test_a_device_arena_that_cannot_be_made_falls_back_to_the_host_before_candidate_code(monkeypatch):
    """The real protocol on a CPU: the parent asks the reference worker for device regions, the
    worker refuses (no CUDA), and the judgement goes on with the host arena, saying why."""
    monkeypatch.setenv("KH_DEVICE_ARENA", "force")
    v = run(AFFINE, task=BIG, allow_torch_ops=True, profile="tiny")
    assert v.status is Status.VALID, (v.message, v.logs)
    assert v.evidence["arena"]["device"] is False
    assert "a device arena on a CPU worker" in v.evidence["arena_device_fallback"]


def test_a_cpu_judgement_uses_the_host_arena():
    v = run(AFFINE, task=BIG, allow_torch_ops=True, profile="tiny")
    assert v.status is Status.VALID, (v.message, v.logs)
    assert v.evidence["arena"]["device"] is False and "arena_device_fallback" not in v.evidence


# -- on the GPU ---------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
GPU = dict(device="cuda", profile="p256m", allow_torch_ops=True, max_timing_s=0.5, feedback_timing_s=0.5,
           timeout_s=600)

# the candidate's side, in its own process: map the two regions from their fds, write the output
# region, try to write the input region (read-only: the write faults, the context is lost)
CHILD = r"""
import json, sys, torch
from sandbox.worker import devarena
from sandbox.worker.arena import Mapping
fds, sizes = json.loads(sys.argv[1]), json.loads(sys.argv[2])
m = Mapping(torch, cuda=True)
rep = devarena.adopt(m, "cuda", ["cand_in", "out"], fds, sizes)
r = {"adopt": {k: v for k, v in rep.items() if k != "pinned"}, "seen": m.u8["cand_in"][:4].tolist()}
m.u8["out"][:8].fill_(7)
torch.cuda.synchronize()
try:
    m.u8["cand_in"][:8].fill_(9)
    torch.cuda.synchronize()
    r["cand_in_write"] = "ok"
except Exception as e:
    r["cand_in_write"] = type(e).__name__ + ": " + str(e)[:200]
print(json.dumps(r))
"""


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
        # made at their sizes before the lock (the task's estimate, or the sizes remembered from the
        # last run), so the candidate mapped them once, at the attach, and never in the hold
        assert v.evidence["arena_presized"]["from"] in ("estimate", "remembered"), v.evidence["arena_presized"]
        assert v.evidence["requests"]["candidate.arena"][0] == 1, v.evidence["requests"]


@pytest.mark.gpu
@needs_gpu
def test_the_candidates_input_region_is_read_only_on_the_device_and_its_output_region_is_shared():
    import json
    import subprocess
    import sys

    from sandbox.worker import devarena
    from sandbox.worker.arena import Mapping

    m = Mapping(torch, cuda=True)
    sizes = {"ref_in": 2 << 20, "cand_in": 2 << 20, "out": 2 << 20}
    rep = devarena.own(m, "cuda", sizes, ["cand_in", "out"])
    assert rep["ok"] and rep["fds"] == ["cand_in", "out"], rep
    m.u8["cand_in"][:8].zero_()
    m.u8["cand_in"][:4].copy_(torch.tensor([1, 2, 3, 4], dtype=torch.uint8))
    torch.cuda.synchronize()
    fds = rep["_fds"]
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(fds), json.dumps(sizes)], pass_fds=fds,
                           capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    finally:
        for fd in fds:
            os.close(fd)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["adopt"]["ok"] and r["adopt"]["readonly"] == {"cand_in": True, "out": False}, r
    assert r["seen"] == [1, 2, 3, 4]  # the reference's bytes, read in the other process
    assert r["cand_in_write"] != "ok", r  # a write into the read-only mapping fails there
    torch.cuda.synchronize()
    assert m.u8["out"][:8].tolist() == [7] * 8  # the candidate's output, seen by the reference
    assert m.u8["cand_in"][:8].tolist() == [1, 2, 3, 4, 0, 0, 0, 0]  # and its inputs untouched
