"""The arena's trusted reader (sandbox/worker/arena.py): an output header comes from the candidate's
process, so every field of it is checked against the region; a malformed header is an answer
about the output (``rejected correctness.output_type``), never a crash of the reference worker.
Also: the watchdog does not count the arena as the worker's memory, and only up to its size."""

from __future__ import annotations

import mmap
import os
import time

import pytest
import torch

from sandbox.isolation import Limits, get_launcher
from sandbox.isolation.proctree import _rss_bytes
from sandbox.worker import arena
from sandbox.worker.arena import Arena, Mapping
from sandbox.worker.session import WorkerSession
from sandbox.worker.tensorfmt import Malformed

ADD = os.path.join(os.path.dirname(__file__), "tasks", "add.py")


def _mapped(nbytes: int) -> tuple[Arena, Mapping]:
    a = Arena()
    a.ensure("out", nbytes)
    m = Mapping(torch, cuda=False)
    m.adopt(["out"], [os.dup(a.fds["out"])])
    m.remap({"out": a.sizes["out"]})
    return a, m


def test_outputs_round_trip_bit_exactly_through_a_region():
    a, m = _mapped(1 << 20)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 7, generator=g)
    outs = [x, torch.arange(11, dtype=torch.int8), x.reshape(3, -1)[:, ::2].t(), torch.empty(0, 3)]
    entries, devices, need = arena.output_layout(torch, outs)
    arena.write_outputs(torch, outs, entries, m.u8["out"])
    back = arena.read_outputs(torch, entries, m.u8["out"], "cpu")
    assert devices == ["cpu"] * 4 and need <= a.sizes["out"]
    for o, b in zip(outs, back, strict=True):
        assert b.dtype == o.dtype and b.shape == o.shape and torch.equal(b, o)
    m.u8["out"].fill_(0)  # the reader copied out of shared memory: later writes change nothing
    assert torch.equal(back[0], x)


@pytest.mark.parametrize("entries", [
    "not a list",
    [{"dtype": "float32", "shape": [4], "offset": -64}],
    [{"dtype": "float32", "shape": [4], "offset": 3}],  # misaligned
    [{"dtype": "float32", "shape": [2**20], "offset": 0}],  # past the region
    [{"dtype": "float32", "shape": [2**40, 2**40], "offset": 0}],  # size overflow in a naive reader
    [{"dtype": "torch.float32", "shape": [4], "offset": 0}],  # not in the table
    [{"dtype": "object", "shape": [4], "offset": 0}],
    [{"dtype": "float32", "shape": [-1], "offset": 0}],
    [{"dtype": "float32", "shape": [4.0], "offset": 0}],
    [{"dtype": "float32", "shape": [True], "offset": 0}],
    [{"dtype": "float32", "shape": [1] * 40, "offset": 0}],
    [{"dtype": "float32", "shape": [4], "offset": 1e3}],
    [{"dtype": "float32", "shape": [64], "offset": 0}, {"dtype": "float32", "shape": [64], "offset": 128}],
    [{"dtype": "float32", "shape": [4], "offset": 0}] * 100,
    [["float32", [4], 0]],
])
def test_a_malformed_output_header_is_refused(entries):
    _, m = _mapped(1 << 16)
    with pytest.raises(Malformed):
        arena.read_outputs(torch, entries, m.u8["out"], "cpu")


def test_the_limit_bounds_what_is_read_not_the_region():
    _, m = _mapped(1 << 16)
    ok = [{"dtype": "float32", "shape": [256], "offset": 0}]  # 1024 bytes
    assert arena.read_outputs(torch, ok, m.u8["out"], "cpu", limit=1024)[0].shape == (256,)
    with pytest.raises(Malformed):
        arena.read_outputs(torch, ok, m.u8["out"], "cpu", limit=1023)


def test_an_unmapped_region_reads_as_malformed_not_a_crash():
    with pytest.raises(Malformed):
        arena.read_outputs(torch, [{"dtype": "float32", "shape": [4], "offset": 0}], None, "cpu")


def test_a_real_reference_worker_answers_a_crafted_header_and_keeps_serving():
    """End to end through a jailed reference worker: crafted headers are ``load_error`` answers."""
    a = Arena()
    w = WorkerSession("reference", get_launcher("process"), "cpu", None, time.monotonic() + 120,
                      Limits(rss_bytes=None, wall_seconds=120))
    try:
        w.connect()
        w.attach_arena(a, arena.REGIONS)
        with open(ADD) as f:
            src = f.read()
        rep, _ = w.request("setup", task_source=src, task_path=ADD, overrides={"N": 256}, init_seed=1)
        assert rep["ok"], rep
        rep, _ = w.request("call", seed=3, target="eager", stage=True)
        assert rep["ok"] and rep["inputs"][0]["shape"] == [256], rep
        a.ensure("out", 1 << 20)
        for bad in ([{"dtype": "float32", "shape": [2**30], "offset": 0}], {"x": 1}, None,
                    [{"dtype": "float32", "shape": [256], "offset": 2**62}]):
            rep, _ = w.request("check", entries=bad, devices=["cpu"], atol=1e-4, rtol=1e-4, against="last")
            assert rep.get("ok") and "malformed" in rep.get("load_error", ""), rep
        # a region made bigger ahead of time (sandbox/worker/arenahint.py) does not raise the bound: nothing
        # past the parent's limit for this call is read, even where the region has room
        rep, _ = w.request("check", entries=[{"dtype": "float32", "shape": [512], "offset": 0}], devices=["cpu"],
                           atol=1e-4, rtol=1e-4, against="last", limit=1024)
        assert rep.get("ok") and "malformed" in rep.get("load_error", ""), rep
        # and a well-formed one still works: zeros are not a + b
        rep, _ = w.request("check", entries=[{"dtype": "float32", "shape": [256], "offset": 0}], devices=["cpu"],
                           atol=1e-4, rtol=1e-4, against="last")
        assert rep.get("ok") and rep.get("types_ok") and rep.get("passed") is False and rep["inputs_intact"], rep
    finally:
        w.close()
        a.close()


def test_the_watchdog_counts_shared_memory_only_beyond_the_arena():
    """Resident arena pages are not the worker's memory (up to the arena's size); anonymous
    shared memory beyond it still is."""
    n = 64 << 20
    a = Arena()
    a.ensure("out", n)
    m = mmap.mmap(a.fds["out"], n)
    m.write(b"\1" * n)  # resident shmem
    anon = mmap.mmap(-1, n, mmap.MAP_SHARED)
    try:
        me = [os.getpid()]
        full = _rss_bytes(me)
        assert full - _rss_bytes(me, n) == n
        anon.write(b"\1" * n)  # another 64 MiB of shmem: only the allowance is taken off
        assert _rss_bytes(me) - _rss_bytes(me, n) == n
        assert _rss_bytes(me, n) >= full
    finally:
        m.close()
        anon.close()
        a.close()
