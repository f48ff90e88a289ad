"""The local pipeline builds the cheapest candidates first (harness/executors/buildorder.py), so
the first verdict does not wait behind compiles it does not need. Real threads; stand-in build
and judge functions with the real pipeline around them (tests/executors/test_local_pipeline.py)."""

from __future__ import annotations

import time

from harness.executors import buildorder
from harness.executors.local import LocalExecutor
from sandbox.evaluate import EvalConfig
from tests.executors.test_local_pipeline import Recorder, Task

NATIVE_A = "from torch.utils.cpp_extension import load_inline\n# A\n"
NATIVE_B = "from torch.utils.cpp_extension import load_inline\n# B\n"
TRITON = "import triton\n# T\n"
TORCH = "import torch\n# P\n"


def test_build_classes():
    assert buildorder.build_class(TORCH, set()) == buildorder.NO_BUILD
    assert buildorder.build_class(TRITON, set()) == buildorder.NO_BUILD
    assert buildorder.build_class(NATIVE_A, set()) == buildorder.NATIVE
    assert buildorder.build_class(NATIVE_A, {buildorder.source_key(NATIVE_A)}) == buildorder.SEEN
    assert buildorder.build_class("import cupy\nk = cupy.RawKernel(src, 'k')\n", set()) == buildorder.NATIVE


def test_candidates_without_a_compile_are_built_and_judged_before_queued_native_builds():
    slow = 0.6
    rec = Recorder(build_delay={NATIVE_A: slow, NATIVE_B: slow}, judge_s=0.01)
    cfg = EvalConfig(device="cpu")
    order = [NATIVE_A, NATIVE_B, NATIVE_A, TRITON, TORCH]  # submission order; the second NATIVE_A repeats a source
    t0 = time.monotonic()
    with LocalExecutor(compile_workers=1, timing_devices=["cpu"], judge_fn=rec.judge, build_fn=rec.build,
                       judges_per_device=1, compile_cuts=False) as ex:
        done_at: dict[int, float] = {}
        futs = [ex.submit(Task(f"op{i}"), src, cfg) for i, src in enumerate(order)]
        for i, f in enumerate(futs):
            f.add_done_callback(lambda _f, i=i: done_at.__setitem__(i, time.monotonic() - t0))
        for f in futs:
            f.result(timeout=30)
        built = list(ex.build_order)
    # the cheap ones first (the first native build may already have started when they came),
    # then the first source again (a likely cache hit) before the other native build
    assert built in ([0, 3, 4, 2, 1], [3, 4, 0, 2, 1]), built
    # the cheap candidates' verdicts came one slow build after submission, not four
    assert max(done_at[3], done_at[4]) < 2 * slow, done_at
    assert rec.judged.index(TRITON) < rec.judged.index(NATIVE_B)
