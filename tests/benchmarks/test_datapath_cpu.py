"""The judge's data path on a CPU (issue 27): staging a call's inputs into the arena, reading the
candidate's output back out of it, and comparing it with the reference's. The GPU numbers (device
arena, sandbox/worker/devarena.py) are in docs/records; these are the parts a CPU can measure."""

from __future__ import annotations

import os

import pytest
import torch

from sandbox.check import compare
from sandbox.worker import arena
from sandbox.worker.arena import Arena, Mapping

N = 16 * 2**20  # 64 MiB of float32


@pytest.fixture(scope="module")
def mapped():
    a = Arena()
    for r in ("cand_in", "out"):
        a.ensure(r, 4 * N + 2**20)
    m = Mapping(torch, cuda=False)
    m.adopt(["cand_in", "out"], [os.dup(a.fds["cand_in"]), os.dup(a.fds["out"])])
    m.remap({r: a.sizes[r] for r in ("cand_in", "out")})
    yield m
    m.reset()
    a.close()


def test_stage_64mib_of_inputs(benchmark, mapped):
    x = torch.randn(N, generator=torch.Generator().manual_seed(0))
    entries = benchmark(arena.stage_inputs, torch, [x], mapped.u8["cand_in"], "cand_in")
    assert arena.inputs_intact(torch, entries, [x], mapped.u8["cand_in"])


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "within_tolerance"])
def test_read_and_compare_a_64mib_output(benchmark, mapped, exact):
    """An output equal to the reference takes compare()'s torch.equal path; one that differs
    within tolerance takes the float64 pass."""
    x = torch.randn(N, generator=torch.Generator().manual_seed(1))
    entries, _, _ = arena.output_layout(torch, [x])
    arena.write_outputs(torch, [x], entries, mapped.u8["out"])
    ref = x.clone() if exact else x * (1 + 1e-6)

    def check():
        outs = arena.read_outputs(torch, entries, mapped.u8["out"], "cpu")
        return compare.compare(outs, [ref], 1e-4, 1e-4)

    c = benchmark.pedantic(check, rounds=3, iterations=1)
    assert c.passed and (c.max_abs_err == 0.0) is exact
