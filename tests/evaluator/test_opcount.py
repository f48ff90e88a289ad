"""The aten-op counter (sandbox/opcount.py) runs inside forward on every call, not only on the
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
