"""The output file between the candidate and reference workers (sandbox/outfile.py): exact round
trips, and a reader that trusts nothing in the file."""

from __future__ import annotations

import json

import pytest
import torch

from sandbox import outfile


def _round_trip(tmp_path, outs):
    p = str(tmp_path / "o.kho")
    devices = outfile.write(torch, outs, p)
    return devices, outfile.read(torch, p, torch.device("cpu"))


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


def test_a_lying_or_broken_file_is_malformed_not_a_crash(tmp_path):
    p = tmp_path / "o.kho"

    def forge(header, data=b""):
        h = json.dumps(header).encode()
        pre = outfile.MAGIC + len(h).to_bytes(8, "little") + h
        p.write_bytes(pre + b"\0" * ((-len(pre)) % outfile.ALIGN) + data)
        return lambda: outfile.read(torch, str(p), torch.device("cpu"))

    cases = [
        forge({"outputs": [{"dtype": "float32", "shape": [1000], "offset": 0}]}, b"\0" * 64),  # claims more
        forge({"outputs": [{"dtype": "object", "shape": [1], "offset": 0}]}, b"\0" * 64),  # no such dtype
        forge({"outputs": [{"dtype": "float32", "shape": [-4], "offset": 0}]}, b"\0" * 64),
        forge({"outputs": [{"dtype": "float32", "shape": [1], "offset": 3}]}, b"\0" * 64),  # unaligned
        forge({"outputs": [{"dtype": "float32", "shape": [1] * 40, "offset": 0}]}, b"\0" * 64),
        forge({"nothing": 1}),
        forge({"outputs": ["x"]}),
    ]
    for read in cases:
        with pytest.raises(outfile.Malformed):
            read()
    p.write_bytes(b"\x80\x04pickle")
    with pytest.raises(outfile.Malformed):
        outfile.read(torch, str(p), torch.device("cpu"))
    p.write_bytes(outfile.MAGIC + (10**9).to_bytes(8, "little"))
    with pytest.raises(outfile.Malformed, match="header"):
        outfile.read(torch, str(p), torch.device("cpu"))
