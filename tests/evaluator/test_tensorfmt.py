"""Outputs through an arena region in the plain-tensor format (sandbox/worker/tensorfmt.py,
sandbox/worker/arena.py): exact round trips for every dtype, NaN/inf and signed zeros, and anything but
a plain tensor comes back as its type's name. Malformed headers: tests/evaluator/test_arena.py."""

from __future__ import annotations

import os

import pytest
import torch

from sandbox.worker import arena
from sandbox.worker.arena import Arena, Mapping


def _round_trip(tmp_path, outs):
    a = Arena()
    a.ensure("out", 1 << 20)
    m = Mapping(torch, cuda=False)
    m.adopt(["out"], [os.dup(a.fds["out"])])
    m.remap({"out": a.sizes["out"]})
    entries, devices, need = arena.output_layout(torch, outs)
    assert need <= a.sizes["out"]
    arena.write_outputs(torch, outs, entries, m.u8["out"])
    return devices, arena.read_outputs(torch, entries, m.u8["out"], "cpu")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int8, torch.uint8, torch.bool, torch.complex64])
def test_plain_tensors_round_trip_bit_exactly(tmp_path, dtype):
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(3, 5, 7, generator=g) * 100).to(dtype) if not dtype.is_complex else \
        torch.randn(4, 6, dtype=dtype, generator=g)
    b = torch.arange(11).to(dtype)  # an odd byte count: the next output's offset is padded
    outs = [a, b, torch.empty(0, 3, dtype=dtype), a.reshape(a.shape[0], -1)[:, ::2].t()]  # last: strided view
    devices, back = _round_trip(tmp_path, outs)
    assert devices == ["cpu"] * 4
    for x, y in zip(outs, back, strict=True):
        assert y.dtype == x.dtype and y.shape == x.shape and torch.equal(y, x)


def test_nan_and_inf_survive(tmp_path):
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1.5])
    _, (y,) = _round_trip(tmp_path, [x])
    assert torch.equal(torch.isnan(y), torch.isnan(x)) and torch.equal(y[1:], x[1:])
    assert torch.signbit(y[3])


def test_anything_but_a_plain_tensor_becomes_its_type_name(tmp_path):
    class Lazy(torch.Tensor):
        pass

    sub = torch.ones(3).as_subclass(Lazy)
    sparse = torch.eye(3).to_sparse()
    _, back = _round_trip(tmp_path, [sub, sparse, 3, None, torch.nn.Parameter(torch.ones(2))])
    assert back[0] == "Lazy" and "layout" in back[1] and back[2] == "int" and back[3] == "NoneType"
    assert back[4] == "Parameter"
