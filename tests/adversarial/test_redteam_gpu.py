"""GPU red team (run on the lent GPU: python harness/bench/tools/gpu_check.py, or pytest -m gpu).

GPU-specific cheats (#4 side stream, and the GPU forms of #1 stale caching-allocator memory,
#2 cuBLAS behind a decoy kernel, #5 late launch from a thread, #7 CUDA event patching) must
be caught with their rules; honest CUDA (one shared extension: vectorised elementwise,
reduction, tiled matmul, direct conv, fused GEMM+bias+ReLU) and Triton (elementwise, softmax)
candidates must be valid with speedups that carry confidence intervals. The CPU cheats of
test_redteam_cpu.py are device-independent and are re-run here on CUDA too.

NOT RUN on a GPU by the author (no GPU on the authoring machine): the CUDA source was only
syntax-checked with nvcc -c; record the first real run in docs/redteam.md.

The isolation attacks with native code (EVAL_RULES #21-#23, #25-#28) run here too, as
gpu_cheat_2*: the same attack extension and attack code as their CPU forms
(test_redteam_isolation.py, whose runners take the device), an honest CUDA ReLU otherwise.
Not yet run on a GPU either.
"""

from __future__ import annotations

import pytest
import torch

from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Status

from . import test_redteam_isolation as iso
from .redteam import (
    CPU_CHEATS,
    GPU_CASES,
    Case,
    config,
    describe,
    keep_verdict,
    params,
    warm_build_cache,
)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.slow,
    pytest.mark.timeout(3600),
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

# CPU cheats whose mechanism is the same on CUDA (the C++ extension is CPU-only, so they judge
# as runtime errors on CUDA inputs): only the pure-Python ones are re-run on the GPU.
DEVICE_INDEPENDENT = {"cheat_02b_subclass_model", "cheat_20d_infinite_loop"}


@pytest.fixture(scope="module", autouse=True)
def warm_cuda_lib():
    warm_build_cache("honest_cuda_relu")


def judge(case: Case):
    v = evaluate(load_task(case.task_path()), case.source(), config(case, device="cuda"))
    keep_verdict(v, case.candidate)
    return v


@pytest.mark.parametrize("case", params([c for c in GPU_CASES if c.statuses != (Status.VALID,)]))
def test_gpu_cheat_is_caught_with_its_rule(case: Case):
    v = judge(case)
    assert v.status in case.statuses, describe(v)
    assert v.rule in case.rules, describe(v)
    assert not v.speedups
    if Status.TIMEOUT in case.statuses:  # ended by a per-call deadline, not the whole wall limit
        assert v.durations_s["total"] < 150, v.durations_s
        held = v.durations_s.get("exclusive", 0.0) - v.durations_s.get("warm", 0.0)
        assert held <= config(case).gpu_hold_s + 15, v.durations_s  # the GPU-held bound, first calls excluded


@pytest.mark.parametrize("case", params([c for c in GPU_CASES if c.statuses == (Status.VALID,)]))
def test_honest_gpu_candidate_is_valid_with_speedup_cis(case: Case):
    v = judge(case)
    assert v.status is Status.VALID, describe(v)
    assert v.host_timers is False
    labels = {t.shape_label for t in v.trials}
    assert "default" in labels and any(lbl.startswith("extra") for lbl in labels), labels
    for base in ("eager", "compile"):
        sp = v.speedups.get(base)
        assert sp is not None and sp.value > 0, v.speedups
        assert sp.ci_low <= sp.value <= sp.ci_high and sp.p_value is not None
    m = v.timings["candidate"]
    assert m.ci_low_us <= m.median_us <= m.ci_high_us and m.n >= 20
    kernels = v.profile.get("kernels", {})
    assert kernels, "the profile should list the candidate's kernels"


@pytest.mark.parametrize("case", params([c for c in CPU_CHEATS if c.candidate in DEVICE_INDEPENDENT]))
def test_device_independent_cheat_is_caught_on_gpu(case: Case):
    v = judge(case)
    assert v.status in case.statuses and v.rule in case.rules, describe(v)


# -- isolation attacks with native code (EVAL_RULES #21-#28), on CUDA ------------------------
@pytest.fixture(scope="module")
def warm_escape_lib_gpu():
    """The attack extension into the shared tier (the candidate is inert unsubstituted)."""
    warm_build_cache(iso.stem("21", "cuda"))


@pytest.mark.parametrize("row", iso.NATIVE_ROWS)
def test_isolation_attack_is_contained_on_gpu(row: str, monkeypatch, warm_escape_lib_gpu):
    iso.ATTACKS[row]("cuda", monkeypatch)


def test_host_socket_in_a_read_only_bound_dir_is_out_of_reach_on_gpu(monkeypatch, warm_escape_lib_gpu):
    iso.attack_23_visible("cuda", monkeypatch)
