"""Where a ``load_inline`` build's compile time goes on this CPU (issue 27, goal 2): the steps of
the build that torch's cpp_extension writes for a small relu extension, each timed alone.

* main.cpp's header parsing (``-fsyntax-only``: torch/extension.h's front end) and its compile;
* cuda.cu through nvcc, with nvcc's phases (preprocessing, cudafe++, cicc, ptxas, host compiler)
  in the benchmark's ``extra_info``.

The commands come from harness/bench/tools/compile_breakdown.py (the whole breakdown, with
lighter headers, a precompiled header and builds at once: ``python -m harness.bench run
compile``). The device's numbers and the levers they point to are in docs/performance.md
("Where a build's time goes now"). One round each: a step takes 10-90 s here.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "harness" / "bench" / "tools" / "compile_breakdown.py"


@pytest.fixture(scope="module")
def cb():
    if shutil.which("nvcc") is None and not Path("/usr/local/cuda/bin/nvcc").exists():
        pytest.skip("benchmark: needs nvcc (the CUDA toolkit compiles here without a GPU)")
    spec = importlib.util.spec_from_file_location("compile_breakdown", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def relu_build(cb, tmp_path_factory):
    d = tmp_path_factory.mktemp("relu_build")
    return d, cb.commands(cb.KERNELS[0], "kh_bench_relu", d)


@pytest.mark.parametrize("step", ["main.cpp -fsyntax-only", "main.cpp -c", "cuda.cu nvcc -c"])
def test_one_step_of_a_relu_extensions_build(benchmark, cb, relu_build, step):
    d, cmds = relu_build
    log = d / (step.replace(" ", "_") + ".log")
    if step == "main.cpp -fsyntax-only":
        run = lambda: cb.timed(cb.edit(cmds["main"], ["-fsyntax-only"], None, nodeps=True), log)  # noqa: E731
    elif step == "main.cpp -c":
        run = lambda: cb.timed(cmds["main"], log)  # noqa: E731
    else:
        run = lambda: cb.nvcc_timed(cmds["cuda"], log)  # noqa: E731
    r = benchmark.pedantic(run, rounds=1, iterations=1)
    assert r["rc"] == 0, r.get("tail")
    benchmark.extra_info.update({k: v for k, v in r.items() if k != "tail"})


KERNEL = r"""#include <torch/extension.h>
torch::Tensor relu_cpu(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const float* a = x.data_ptr<float>(); float* b = y.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) b[i] = a[i] > 0.f ? a[i] : 0.f;
  return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("relu_cpu", &relu_cpu); }
"""


@pytest.mark.parametrize("flags", ["", "-O3"])
@pytest.mark.parametrize("header", ["parsed", "precompiled"])
def test_a_cpu_main_cpp_with_and_without_the_precompiled_header_of_its_flags(benchmark, tmp_path, monkeypatch,
                                                                             flags, header):
    """A C++ extension's main.cpp compiled with the compile line torch writes for its flags, parsing
    torch/extension.h or reading the precompiled header of those flags (sandbox/build/pch.py; the
    header is built first, outside the timing, once per machine)."""
    import resource
    import subprocess
    import time

    from sandbox.build import pch

    monkeypatch.setenv("KH_BUILD_PCH", "1")
    fl = tuple(flags.split())
    extra: list[str] = []
    if header == "precompiled":
        _, why = pch.ensure(fl)
        assert why == "", why
        extra = ["-I", pch.include_for([str(pch.home())], list(fl))]
    (tmp_path / "main.cpp").write_text(KERNEL)
    argv = [*pch.compile_line(fl), "-DTORCH_EXTENSION_NAME=kh_bench", *extra, "-c", "main.cpp", "-o", "main.o"]

    def compile_once():
        t, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=900)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r, time.perf_counter() - t, after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime

    r, took, cpu_s = benchmark.pedantic(compile_once, rounds=1, iterations=1)
    assert r.returncode == 0, r.stderr[-2000:]
    benchmark.extra_info.update({"flags": flags or "(none)", "header": header, "wall_s": round(took, 2),
                                 "cpu_s": round(cpu_s, 2)})  # the compiler's CPU time: what a loaded box does not inflate
