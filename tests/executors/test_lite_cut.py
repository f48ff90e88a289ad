"""The KH_BUILD_LITE compile cut (sandbox/build/buildcache.py): CUDA sources are first built without
their ``#include <torch/extension.h>``; a source that fails that way is built unchanged, the
failure is remembered, and the error a user sees is the unchanged source's.

The successful cut build needs a CUDA torch (harness/bench/tools/gpu_throughput.py measures it on the lent
GPU); here the build fails at once (no CUDA toolkit for this torch), which exercises the
fallback path with real load_inline calls in a child process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sandbox.build.buildcache import lite_cuda_sources

REPO = Path(__file__).resolve().parents[2]

KERNEL = "__global__ void k(float* x) { x[0] = 1.f; }\n"


def test_the_include_is_dropped_and_nothing_else_changes():
    src = f"#include <torch/extension.h>\n#include <cuda_runtime.h>\n{KERNEL}"
    out = lite_cuda_sources(src)
    assert "torch/extension.h>\n" not in out and out.count("\n") == src.count("\n")
    assert out.splitlines()[1:] == src.splitlines()[1:]
    assert lite_cuda_sources(["  #  include \"torch/extension.h\" // c\n" + KERNEL])[0].startswith("//")


def test_sources_that_need_the_full_header_or_lack_it_are_left_alone():
    assert lite_cuda_sources(KERNEL) is None
    assert lite_cuda_sources(None) is None and lite_cuda_sources("") is None
    for needs in ("PYBIND11_MODULE(m, x) {}", "namespace py = pybind11;", "torch::nn::Linear l(1, 1);"):
        assert lite_cuda_sources(f"#include <torch/extension.h>\n{KERNEL}{needs}\n") is None
    assert lite_cuda_sources("// #include <torch/extension.h> is not here\n" + KERNEL) is None


_CHILD = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
os.environ["KH_BUILD_LITE"] = "1"
os.environ.pop("CUDA_HOME", None); os.environ.pop("CUDA_PATH", None)
from sandbox.build import buildcache
buildcache.install(sys.argv[2])
from torch.utils.cpp_extension import load_inline
err = ""
try:
    load_inline("lite_t", "torch::Tensor f(torch::Tensor x);",
                "#include <torch/extension.h>\n__global__ void k(float* x) { x[0] = 1.f; }\n"
                "torch::Tensor f(torch::Tensor x) { k<<<1, 1>>>(x.data_ptr<float>()); return x; }\n",
                functions=["f"], extra_cflags=["-fno-such-flag-kh"])
except Exception as e:
    err = f"{type(e).__name__}: {e}"
print(json.dumps({"stats": {k: v for k, v in buildcache.STATS.items()}, "error": err}))
"""


def _child(cache: Path) -> dict:
    r = subprocess.run([sys.executable, "-c", _CHILD, str(REPO), str(cache)], capture_output=True, text=True,
                       timeout=600, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_failed_cut_build_falls_back_to_the_unchanged_source_once(tmp_path):
    cache = tmp_path / "cache"
    first = _child(cache)
    assert first["error"], "this torch cannot build CUDA: the build must fail"
    assert first["stats"]["lite_fallbacks"] == 1 and first["stats"]["lite"] == 0
    entries = [d for d in cache.iterdir() if d.is_dir()]
    failed = [d for d in entries if (d / ".failed").exists()]
    assert len(entries) == 2 and len(failed) == 1, entries
    cut_cu = (failed[0] / "cuda.cu").read_text()
    assert "compile cut" in cut_cu and "#include <torch/extension.h>" not in cut_cu
    plain = next(d for d in entries if d not in failed)
    assert "#include <torch/extension.h>" in (plain / "cuda.cu").read_text()
    # the error the user sees is the unchanged source's build error
    assert "compile cut" not in first["error"]
    # a second process does not retry the cut build: its files are not written again
    stamp = (failed[0] / "cuda.cu").stat().st_mtime_ns
    second = _child(cache)
    assert second["stats"]["lite_fallbacks"] == 1 and second["error"] == first["error"]
    assert (failed[0] / "cuda.cu").stat().st_mtime_ns == stamp
