"""The aten-op counter (sandbox/rules/opcount.py) runs inside forward on every call, not only on the
profiled one, and is what the custom-code rule reads for all of them."""

from __future__ import annotations

from sandbox import rules
from sandbox.verdict import Status
from tests.evaluator.conftest import CPP_ADD, python_candidate, run


def test_every_call_is_counted():
    v = run(python_candidate("        return a + b"), allow_torch_ops=True)
    assert v.status is Status.VALID, (v.status, v.message, v.evidence.get("opcount"))
    counts = v.profile["aten_counts"]
    # 5 correctness trials + the repeat + the profiled call, then every timed and re-checked call
    assert counts.get("aten::add", 0) >= 7 + v.timings["candidate"].n, counts


def test_torch_compute_on_unprofiled_calls_only_is_rejected():
    # the C++ kernel when the profiler is on, torch otherwise: the profiled call looks honest
    src = ("import torch\n_mod = getattr(getattr(torch, 'auto' + 'grad'), 'prof' + 'iler')\n"
           "_flag = '_is_' + 'prof' + 'iler_enabled'\n" + CPP_ADD)
    assert "def forward(self, a, b):\n" in src
    body = src.split("def forward(self, a, b):\n", 1)[1]
    indent = body[: len(body) - len(body.lstrip())]
    src = src.replace("def forward(self, a, b):\n",
                      f"def forward(self, a, b):\n{indent}if not getattr(_mod, _flag, False):\n{indent}    return a + b\n", 1)
    v = run(src)
    assert v.status is Status.REJECTED and v.rule == rules.TORCH_FALLBACK, (v.status, v.rule, v.message)
    assert "every call" in v.message and "aten::add" in v.message


def test_the_honest_kernel_passes_the_counter():
    v = run(CPP_ADD)
    assert v.status is Status.VALID, (v.status, v.rule, v.message)
    assert "opcount" not in v.evidence
    assert not [k for k in v.profile["aten_counts"] if k.endswith(("::add", "::add_"))]


_BRIDGES = r'''
import sys, torch
from sandbox.rules import ownhooks
from sandbox.rules.opcount import Counter, ensure
path, why = ensure(sys.argv[1])
assert path, why
oc = Counter(path)
ownhooks.install_library_counts(oc, torch, cuda=sys.argv[2] == "cuda")
t = torch.arange(6.0)
oc.take_py()
oc.arm(True)
torch.from_dlpack(torch.utils.dlpack.to_dlpack(t))  # DLPack out and in
oc.arm(False)
dl = oc.take_py()[2]
oc.arm(True)
torch.from_numpy(t.numpy())  # the numpy bridge, out and in
oc.arm(False)
print(dl, oc.take_py()[2])
'''


def test_dlpack_is_a_counted_bridge_on_cpu_and_left_to_kernel_owners_on_cuda(tmp_path):
    """Class 3 (c): on CPU every tensor/numpy bridge counts (library compute); on a GPU, DLPack is
    how a candidate's own cupy RawKernel shares torch's memory (conformance row cupy_relu_rawkernel,
    H200 2026-11-26: rejected library_compute before this), so only Tensor.numpy/from_numpy count
    and the kernels' owners decide. The real counter library, in a child process (it wraps torch's
    functions in place)."""
    import subprocess
    import sys

    from sandbox.build import buildcache
    from sandbox.config import EvalConfig
    from sandbox.worker.judgeenv import cache_root

    root = buildcache.layout(cache_root(EvalConfig(device="cpu")), "")[2]  # the trusted tier, as the judge's
    got = {}
    for device in ("cpu", "cuda"):
        r = subprocess.run([sys.executable, "-c", _BRIDGES, root, device], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        got[device] = tuple(int(x) for x in r.stdout.split())
    assert got["cpu"][0] >= 2 and got["cpu"][1] >= 2, got
    assert got["cuda"] == (0, got["cpu"][1]), got
