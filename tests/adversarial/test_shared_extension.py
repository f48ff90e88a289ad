"""Every CUDA red-team candidate carries the same extension source between the markers
"# --- shared CUDA extension" and "# --- end of shared CUDA extension". The copies are on
purpose: each candidate is a standalone file that `harness eval` judges as it is (no imports
from the test tree). They must stay byte-identical, or the build cache stops sharing one
~50 s nvcc build between them (harness/bench/tools/gpu_warm.py builds it once for the whole GPU red team)."""

from __future__ import annotations

from pathlib import Path

CANDIDATES = Path(__file__).resolve().parent / "candidates"
START, END = "# --- shared CUDA extension", "# --- end of shared CUDA extension"


def _block(text: str) -> str:
    a = text.index(START)
    return text[text.index("\n", a) + 1: text.index(END)]


def test_shared_cuda_extension_is_identical_in_every_candidate():
    files = sorted(p for p in CANDIDATES.glob("*.py") if "redteam_cuda_lib" in p.read_text())
    assert len(files) >= 10, [p.name for p in files]
    blocks = {p.name: _block(p.read_text()) for p in files}
    first = blocks[files[0].name]
    differ = [name for name, b in blocks.items() if b != first]
    assert not differ, f"the shared extension differs from {files[0].name} in {differ}"
