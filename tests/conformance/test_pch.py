"""The precompiled torch/extension.h per flag set (sandbox/build/pch.py): GCC uses it for the compile
line torch writes, a compile it is not valid for parses the header as before, and it is not in the
build cache's key (a build made with it is the build made without it)."""

from __future__ import annotations

import subprocess

import pytest

from sandbox.build import pch
from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Status
from tests.adversarial.redteam import Case, config

pytestmark = pytest.mark.slow

O3 = ("-O3",)  # the flags of most kernels in tests/ (and of published ones): the suite builds this one anyway


@pytest.mark.parametrize("source, flags", [
    ('load_inline(name="a", cpp_sources=S, functions=["f"])', [()]),
    ('load_inline(name="a", cpp_sources=S, extra_cflags=["-O3"], verbose=False)', [("-O3",)]),
    ('torch.utils.cpp_extension.load_inline("a", S, None, extra_cflags=("-O2",))', [("-O2",)]),
    ('load_inline("a", S, cuda_sources=C, extra_cflags=["-O3"])', []),  # CUDA: main.cpp is parsed slim
    ('load_inline("a", S, C)', []),
    ('load_inline("a", S, extra_cflags=["-O3", "-march=native"])', []),  # no header for these flags
    ('load_inline("a", S, extra_cflags=F)', []),  # not a literal
    ('load_inline("a", S, extra_cflags=3)', []),
    ('load_inline("a", S, extra_include_paths=["/x"])', []),
    ('load_inline("a", S)\nload_inline("b", S, extra_cflags=["-O3"])\nload_inline("c", S)', [(), ("-O3",)]),
    ("def broken(:", []),
])
def test_the_flag_sets_prepared_ahead_are_those_of_cpp_only_builds(source, flags):
    assert pch.wanted(source) == flags


def test_gcc_uses_the_header_for_torchs_compile_line_and_parses_torchs_own_otherwise(tmp_path, monkeypatch):
    monkeypatch.setenv("KH_BUILD_PCH", "1")
    took, why = pch.ensure(O3)
    assert why == "", why
    folder = pch.include_for([str(pch.home())], list(O3))
    assert folder is not None and (pch.home() / folder).is_dir()
    main = tmp_path / "main.cpp"  # load_inline's first line, then the candidate's own include
    main.write_text("#include <torch/extension.h>\n#include <torch/extension.h>\n"
                    "torch::Tensor twice(torch::Tensor x) { return x + x; }\n")

    def compile_with(flags):
        return subprocess.run([*pch.compile_line(flags), "-I", folder, "-H", "-fsyntax-only", str(main)],
                              capture_output=True, text=True, timeout=600)

    used = compile_with(O3)
    assert used.returncode == 0, used.stderr[-2000:]
    assert f"! {folder}/torch/extension.h.gch" in used.stderr, used.stderr[:2000]  # -H: "!" = read from the .gch
    other = compile_with(())  # not valid without -O (__OPTIMIZE__): torch's header, through the folder's
    assert other.returncode == 0, other.stderr[-2000:]
    assert f"! {folder}" not in other.stderr and "/torch/include/torch/extension.h" in other.stderr, other.stderr[:2000]
    assert pch.include_for([str(pch.home())], ["-O1"]) is None and pch.include_for([str(pch.home())], ["-O3", "-g"]) is None
    monkeypatch.delenv("KH_BUILD_PCH")
    assert pch.include_for([str(pch.home())], list(O3)) is None  # the cut off: never given


def test_a_build_given_the_header_is_the_stock_build_in_the_cache(tmp_path, monkeypatch):
    """Judged with the header, then with the cut off on the same cache: the second finds the first's
    build (same key), so what a candidate loads never depends on the cut."""
    case = Case("honest_cpu_matmul", "matmul", ())
    task, src = load_task(case.task_path()), case.source()
    assert pch.wanted(src) == [O3]
    cfg = config(case, build_dir=str(tmp_path / "cache"), correctness_trials=2)
    monkeypatch.setenv("KH_BUILD_PCH", "1")
    with_header = evaluate(task, src, cfg)
    assert with_header.status is Status.VALID, with_header.message
    assert with_header.evidence["build"]["builds"] == 1 and with_header.evidence["build"]["pch"] == 1
    monkeypatch.delenv("KH_BUILD_PCH")
    stock = evaluate(task, src, cfg)
    assert stock.status is Status.VALID, stock.message
    assert stock.evidence["build"]["builds"] == 0 and stock.evidence["build"]["cache_hits"] == 1
