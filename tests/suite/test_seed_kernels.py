"""Shipped seed kernels (reference_ops/seeds/) and op parts (reference_ops/parts.toml): every seed
is a ModelNew for a suite op, in both languages; the documented list is the shipped list; seeds
are judged valid like any candidate (C++ here, CUDA on the GPU: harness/bench/tools/check_seed_kernels.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.suite.seeds import load_seed, parts_of, seeded_ops, seeds_dir, shipped_seeds_dir
from harness.suite.suites import SuiteError, find_task, op_paths

DOCS = Path(__file__).resolve().parents[2] / "docs" / "methods.md"


def test_every_seed_is_a_modelnew_for_a_suite_op_in_both_languages():
    cuda, cpp = seeded_ops("cuda"), seeded_ops("cpp")
    assert cuda == cpp and len(cuda) == 8
    ops = op_paths()
    for op in cuda:
        assert op in ops
        for lang in ("cuda", "cpp"):
            seed = load_seed(op, lang, shipped_seeds_dir())
            assert seed is not None and "class ModelNew(nn.Module)" in seed.source
            assert seed.thought and seed.name == f"seed_{op}"
            assert f'name="seed_{op}_{lang}_v1"' in seed.source  # its own extension name
    documented = re.search(r"ships honest, simple seeds for 8 level-1 ops: (.*?)\(one thread", DOCS.read_text(), re.S)
    assert documented and set(re.findall(r"`(\w+)`", documented.group(1))) <= set(cuda)


def test_seed_folder_option_and_parts():
    assert seeds_dir("suite") == shipped_seeds_dir() and seeds_dir("none") is None and seeds_dir(None) is None
    with pytest.raises(SuiteError, match="--seed-kernels"):
        seeds_dir("/no/such/folder")
    assert parts_of("gemm_bias_relu") == ["matmul_rect", "relu"] and parts_of("relu") == []
    ops = op_paths()
    for fused in (p.stem for p in ops.values() if p.parent.name == "fused"):
        assert parts_of(fused) and all(part in ops for part in parts_of(fused))


@pytest.mark.slow
@pytest.mark.parametrize("op", ["layer_norm"])  # relu's seed is judged in test_e2e_cli
def test_cpu_seed_is_valid_under_the_evaluator(op):
    from harness.policy import eval_config
    from sandbox.contract import Mode, evaluate

    task = find_task(op)
    seed = load_seed(op, "cpp", shipped_seeds_dir())
    v = evaluate(task, seed.source, eval_config(Mode.FEEDBACK, "cpu", task=task, seed=0, max_timing_s=0.3))
    assert v.valid, (v.status, v.rule, v.message)


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("op", seeded_ops("cuda"))
def test_cuda_seed_is_valid_on_the_gpu(op):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from harness.policy import eval_config
    from sandbox.contract import Mode, evaluate

    task = find_task(op)
    seed = load_seed(op, "cuda", shipped_seeds_dir())
    v = evaluate(task, seed.source, eval_config(Mode.FINAL, "cuda", task=task, max_timing_s=2.0))
    assert v.valid, (v.status, v.rule, v.message, v.logs[-2000:])
