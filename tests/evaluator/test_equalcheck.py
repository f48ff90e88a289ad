"""The candidate worker's inputs-unchanged comparison (sandbox/worker/equalcheck.py): the same
answer in slices as a whole-tensor comparison with NaN matched by position, for every layout an
input can have, and +inf never equal to the largest finite value."""

from __future__ import annotations

import pytest
import torch

from sandbox.worker import equalcheck


def _truth(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Element by element, on copies: NaN where both are NaN, else ==."""
    x, y = a.flatten().tolist(), b.flatten().tolist()
    return all((u != u and v != v) or u == v for u, v in zip(x, y, strict=True))


def _cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    base = torch.randn(37, 5, 3, generator=g)
    nan = base.clone()
    nan[3, 1, 2] = nan[30, 0, 0] = float("nan")
    moved = nan.clone()
    moved[30, 0, 0], moved[30, 0, 1] = moved[30, 0, 1].item(), float("nan")  # the NaN moved within a late slice
    last = base.clone()
    last[36, 4, 2] += 1  # a change in the last, short slice
    big = base.clone()
    big[7, 2, 1] = torch.finfo(torch.float32).max
    inf = big.clone()
    inf[7, 2, 1] = float("inf")
    wide = torch.randn(3, 4, generator=g).expand(37, 3, 4)  # an expanded input (stride 0 on dim 0)
    ints = torch.randint(0, 9, (37, 6), generator=g)
    ints2 = ints.clone()
    ints2[20, 5] += 1
    return [
        ("same", base, base.clone()),
        ("nan at the same places", nan, nan.clone()),
        ("a nan moved", nan, moved),
        ("changed in the last slice", base, last),
        ("+inf against the largest finite", big, inf),
        ("transposed views", base.transpose(0, 2), base.clone().transpose(0, 2)),
        ("transposed, one changed", base.transpose(0, 2), last.transpose(0, 2)),
        ("expanded", wide, wide.contiguous()),
        ("integers", ints, ints.clone()),
        ("integers, one changed", ints, ints2),
        ("zero-d", torch.tensor(float("nan")), torch.tensor(float("nan"))),
        ("complex nan", torch.tensor([1 + 1j, complex("nan+0j")]), torch.tensor([1 + 1j, complex("nan+0j")])),
    ]


@pytest.mark.parametrize("slice_elems", [1, 7, 15, 1 << 26])  # rows one at a time, several rows, a slice, whole
@pytest.mark.parametrize("name, a, b", _cases(), ids=[c[0] for c in _cases()])
def test_the_sliced_comparison_gives_the_element_by_element_answer(name, a, b, slice_elems):
    eq = equalcheck.make(torch, slice_elems=slice_elems)
    assert eq(a, b) is _truth(a, b), name
    assert eq(b, a) is _truth(a, b), name


def test_the_functions_are_the_ones_torch_had_when_it_was_made(monkeypatch):
    """A candidate that replaces torch.equal after the worker started does not change the answer."""
    eq = equalcheck.make(torch, slice_elems=4)
    a = torch.arange(12.0).reshape(6, 2)
    b = a.clone()
    b[5, 1] = -1
    monkeypatch.setattr(torch, "equal", lambda x, y: True)
    monkeypatch.setattr(torch, "isnan", lambda x: torch.zeros_like(x, dtype=torch.bool))
    assert eq(a, b) is False
