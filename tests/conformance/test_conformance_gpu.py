"""The conformance set's CUDA rows through scripts/gpu_conformance.py (skips without CUDA)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))


def test_every_cuda_conformance_kernel_gets_its_expected_verdict():
    import gpu_conformance

    assert gpu_conformance.main([]) == 0
