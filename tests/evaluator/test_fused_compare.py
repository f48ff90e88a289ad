"""sandbox/check/fusedcompare.py: the tolerance rule's all-finite pass as one CUDA kernel. It must
give the torch pass's statistics bit for bit (same float64 operations, no contracted multiply-add),
hand a tensor with NaN/inf back to the masked torch pass, and load only the library the parent
built (by hash). The build and the hash check run wherever nvcc is; the kernel needs a GPU."""

from __future__ import annotations

import os
import shutil

import pytest
import torch

from sandbox.check import compare, fusedcompare
from tests.evaluator.test_compare import make

needs_nvcc = pytest.mark.skipif(fusedcompare._nvcc() is None, reason="needs nvcc")
needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("fused"))


@pytest.fixture(scope="module")
def built(root):
    path, why = fusedcompare.ensure(root)
    assert path is not None, why
    return path


@needs_nvcc
def test_the_parent_builds_it_once_and_a_worker_loads_only_that_file(root, built, tmp_path):
    mtime = os.stat(built).st_mtime_ns
    fusedcompare._READY.clear()  # a new process: the file on disk is found, not built again
    assert fusedcompare.ensure(root) == (built, None) and os.stat(built).st_mtime_ns == mtime
    fusedcompare.Lib(built, fusedcompare.file_sha256(built))  # loads (no GPU needed to load)
    other = tmp_path / "other.so"
    shutil.copyfile(built, other)
    other.write_bytes(other.read_bytes() + b"\0")  # not the file the parent built
    with pytest.raises(RuntimeError, match="hash"):
        fusedcompare.Lib(str(other), fusedcompare.file_sha256(built))


@pytest.mark.gpu
@needs_gpu
@needs_nvcc
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
@pytest.mark.parametrize("specials", [False, True], ids=["finite", "nan-inf"])
def test_on_the_gpu_the_one_kernel_pass_equals_the_torch_pass_bit_for_bit(built, dtype, specials):
    """Outputs past fusedcompare.MIN_ELEMENTS, with elements on the tolerance's edge and plainly
    outside it; with NaN/inf the kernel declines and the masked torch pass runs."""
    lib = fusedcompare.Lib(built)
    n = fusedcompare.MIN_ELEMENTS + 12_345
    o, r = make(7, n, specials)
    o, r = o.to(dtype).cuda(), r.to(dtype).cuda()
    got = compare._float_stats(o, r, 1e-4, 1e-4, chunk=compare.CHUNK_CUDA, fused=lib)
    want = compare._float_stats(o, r, 1e-4, 1e-4, chunk=compare.CHUNK_CUDA, finite_pass=True)
    assert got.fused is not specials and got.masked is specials and not want.fused
    fields = ("abs_err", "rel_err", "tightest", "n_bad", "n_nonfinite", "n_special", "first_bad")
    assert {f: getattr(got, f) for f in fields} == {f: getattr(want, f) for f in fields}
    assert got.n_bad > 0
    # a whole compare() says how many outputs took the one-kernel pass
    c = compare.compare([o], [r], 1e-4, 1e-4, fused=lib)
    assert c.fused == (0 if specials else 1) and not c.passed


@needs_nvcc
def test_the_reference_worker_loads_the_copy_the_judge_put_in_its_scratch(monkeypatch):
    """The reference worker does not see the trusted cache the parent builds into (on the H200, every
    load failed with FileNotFoundError until the judge copied the file into its scratch). With
    ``cpu-too`` a CPU judgement carries the library as a GPU one does: loaded, no error, nothing
    compared with it (its tensors are on the CPU)."""
    from sandbox.verdict import Status
    from tests.evaluator.conftest import python_candidate, run

    monkeypatch.setenv("KH_FUSED_COMPARE", "cpu-too")
    v = run(python_candidate("        return a + b"), allow_torch_ops=True)
    assert v.status is Status.VALID, (v.message, v.logs)
    assert v.evidence["compare_fused"] == {"outputs": 0}, v.evidence.get("compare_fused")
