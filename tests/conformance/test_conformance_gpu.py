"""The conformance set's CUDA rows through harness/bench/tools/gpu_conformance.py, one test per group of rows
(each group builds in parallel, then judges: a few minutes cold, so that each fits one part of
harness/bench/tools/gpu_tests.py). The groups are checked on the CPU to cover every CUDA row."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from .manifest import rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "bench" / "tools"))

GROUPS = ("cuda_inline", "triton", "cupy")  # --only substrings of the kernel names


def test_the_groups_cover_every_cuda_row_once():
    names = [r.kernel for r in rows("cuda")]
    assert sorted(n for g in GROUPS for n in names if g in n) == sorted(names)


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_every_cuda_conformance_kernel_gets_its_expected_verdict(group):
    needs = {r.needs for r in rows("cuda", group) if r.needs}
    for mod in needs:  # else the script reports the rows skipped and agrees with nothing
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed (the {group} rows need it)")
    import gpu_conformance

    assert gpu_conformance.main(["--only", group]) == 0
