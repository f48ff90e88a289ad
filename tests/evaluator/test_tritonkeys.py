"""The harness's Triton autotune cache never changes what a candidate computes (sandbox/build/tritonkeys.py,
issue 25): a tuning whose key Triton cannot write to disk (a pointer argument in ``key=``) is tuned
per process, as Triton does without the cache; every other tuning is still cached.

Triton is not installed on the CPU test box, and its disk cache is off under TRITON_INTERPRET=1
(``cache_results`` requires ``not knobs.runtime.interpret``), so the CPU tests drive a stand-in
module with Triton 3.6.0's ``check_disk_cache`` steps (benchmark, then ``json.dumps`` of the key):
the boundary we cannot reach here. The gpu-marked test runs the real Triton."""

from __future__ import annotations

import enum
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from sandbox.build import tritonkeys

REPO = Path(__file__).resolve().parents[2]

# Triton 3.6.0's Autotuner.run / check_disk_cache, reduced to the steps that matter here
STAND_IN = '''
import hashlib, json, os


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages
        self.num_ctas, self.maxnreg, self.pre_hook = num_ctas, maxnreg, pre_hook


class Autotuner:
    def __init__(self, configs, cache_dir):
        self.configs, self.cache, self.cache_dir, self.benched = configs, {}, cache_dir, 0

    def check_disk_cache(self, tuning_key, configs, bench_fn):
        if not tuning_key or any(c.pre_hook for c in configs):
            bench_fn()
            return False
        path = os.path.join(self.cache_dir, hashlib.sha256(str(tuning_key).encode()).hexdigest() + ".autotune.json")
        if os.path.exists(path):
            with open(path) as f:
                timings = json.load(f)["configs_timings"]
            self.cache[tuning_key] = Config(**min(timings, key=lambda ct: ct[1])[0])
            return True
        bench_fn()
        data = json.dumps({"key": tuning_key,
                           "configs_timings": [(c.__dict__, t) for c, t in self.configs_timings.items()]})
        with open(path, "w") as f:
            f.write(data)
        return False

    def run(self, *key_args):
        key = tuple(key_args)
        if key not in self.cache:
            def benchmark():
                self.benched += 1
                timings = {c: float(c.num_warps) for c in self.configs}
                self.cache[key] = min(timings, key=timings.get)
                self.configs_timings = timings
            self.check_disk_cache(key, self.configs, benchmark)
        return self.cache[key]
'''


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A fresh package ``kh_standin_N`` with ``runtime/autotuner.py``; its module name, and the
    import system restored afterwards."""
    name = f"kh_standin_{abs(hash(str(tmp_path))) % 10**8}"
    pkg = tmp_path / "site" / name / "runtime"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "autotuner.py").write_text(STAND_IN)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    before = set(sys.modules)
    yield f"{name}.runtime.autotuner", tmp_path
    for m in set(sys.modules) - before:
        del sys.modules[m]


def _tuner(module: str, cache_dir: Path):
    import importlib

    mod = importlib.import_module(module)
    return mod, mod.Autotuner([mod.Config({"BLOCK": 128}, num_warps=8), mod.Config({"BLOCK": 256}, num_warps=4)],
                              str(cache_dir))


def test_without_the_guard_a_pointer_key_fails_as_it_did_in_the_judge(stand_in):
    module, tmp = stand_in
    _, tuner = _tuner(module, tmp)
    with pytest.raises(TypeError, match="not JSON serializable"):
        tuner.run(torch.zeros(4), "torch.float32")


def test_a_pointer_key_tunes_per_process_and_a_plain_key_is_still_cached(stand_in):
    module, tmp = stand_in
    assert tritonkeys.install(module, {"TRITON_CACHE_AUTOTUNING": "1"}) == "hooked"
    mod, tuner = _tuner(module, tmp)
    x = torch.zeros(4)
    assert tuner.run(x, "torch.float32").num_warps == 4 and tuner.benched == 1
    assert tuner.run(x, "torch.float32").num_warps == 4 and tuner.benched == 1  # kept in memory
    assert not list(tmp.glob("*.autotune.json"))  # nothing written for it
    assert tuner.run(4096, "torch.float32").num_warps == 4
    written = list(tmp.glob("*.autotune.json"))
    assert len(written) == 1 and json.loads(written[0].read_text())["key"] == [4096, "torch.float32"]
    _, fresh = _tuner(module, tmp)  # another process's tuner reads it instead of tuning
    assert fresh.run(4096, "torch.float32").num_warps == 4 and fresh.benched == 0
    assert tritonkeys.install(module, {"TRITON_CACHE_AUTOTUNING": "1"}) == "patched"  # already imported
    assert getattr(mod.Autotuner.check_disk_cache, "__wrapped__", None) is not None
    assert not getattr(mod.Autotuner.check_disk_cache.__wrapped__, "__wrapped__", None)  # wrapped once


@pytest.mark.parametrize("env", [{}, {"TRITON_CACHE_AUTOTUNING": "0"}, {"TRITON_CACHE_AUTOTUNING": ""}])
def test_nothing_is_touched_where_the_harness_leaves_the_cache_off(stand_in, env):
    module, tmp = stand_in
    assert tritonkeys.install(module, env) == "off"
    _, tuner = _tuner(module, tmp)
    assert not hasattr(type(tuner).check_disk_cache, "__wrapped__")


class _Flag(enum.IntEnum):
    A = 1


@pytest.mark.parametrize("key, kwargs, ok", [
    ((4096, "torch.float32"), {"BLOCK": 128}, True),
    ((1.5, True, None), {}, True),
    ((torch.zeros(2), "torch.float32"), {"BLOCK": 128}, False),  # key=['x_ptr']
    ((_Flag.A,), {}, False),  # an int subclass: not read back as itself
    ((4096,), {"SHAPE": (2, 2)}, False),  # a tuple comes back from JSON as a list
    ((4096,), {"DTYPE": object()}, False),  # e.g. tl.float16 in a config
])
def test_what_can_be_cached(key, kwargs, ok):
    class Config:
        def __init__(self):
            self.kwargs, self.num_warps, self.num_stages, self.pre_hook = kwargs, 4, 3, None

    assert tritonkeys.cacheable(key, [Config()]) is ok


GPU_SCRIPT = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
from sandbox.build import tritonkeys
print("install", tritonkeys.install())
import torch, triton, triton.language as tl

CONFIGS = [triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 2048}, num_warps=8)]

@triton.autotune(configs=CONFIGS, key=["x_ptr"])
@triton.jit
def relu_ptr(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0), mask=m)

@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def relu_n(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=m), 0.0), mask=m)

x = torch.randn(1 << 20, device="cuda")
for k in (relu_ptr, relu_n):
    y = torch.empty_like(x)
    k[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
    torch.cuda.synchronize()
    assert torch.equal(y, x.relu()), k
files = [f for d, _, fs in os.walk(os.environ["TRITON_CACHE_DIR"]) for f in fs if f.endswith(".autotune.json")]
print("autotune files", json.dumps(sorted(files)))
'''


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU and Triton")
def test_real_triton_pointer_key_runs_with_the_harness_cache_on(tmp_path):
    pytest.importorskip("triton")
    import os

    script = tmp_path / "ptr_key.py"  # a file: Triton reads a kernel's source from it
    script.write_text(textwrap.dedent(GPU_SCRIPT))
    env = {**os.environ, "TRITON_CACHE_AUTOTUNING": "1", "TRITON_CACHE_DIR": str(tmp_path / "triton")}
    r = subprocess.run([sys.executable, str(script), str(REPO)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "install hooked" in r.stdout or "install patched" in r.stdout, r.stdout
    files = json.loads(r.stdout.split("autotune files", 1)[1])
    assert files == ["relu_n.autotune.json"], files  # the plain key is cached; the pointer key is not
