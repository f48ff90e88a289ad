"""The local pipeline builds the cheapest candidates first (harness/executors/buildorder.py), so
the first verdict does not wait behind compiles it does not need. Real threads; stand-in build
and judge functions with the real pipeline around them (tests/executors/test_local_pipeline.py)."""

from __future__ import annotations

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
    """The property, not a duration: when each cheap candidate's verdict comes, at most one native
    build (the one that may already have started when they came) has finished, not all three."""
    rec = Recorder(build_delay={NATIVE_A: 0.3, NATIVE_B: 0.3}, judge_s=0.01)
    native_done = []  # native builds finished so far

    def build(task, source, config):
        out = rec.build(task, source, config)
        if source in (NATIVE_A, NATIVE_B):
            native_done.append(source)
        return out

    cfg = EvalConfig(device="cpu")
    order = [NATIVE_A, NATIVE_B, NATIVE_A, TRITON, TORCH]  # submission order; the second NATIVE_A repeats a source
    with LocalExecutor(compile_workers=1, timing_devices=["cpu"], judge_fn=rec.judge, build_fn=build,
                       judges_per_device=1, compile_cuts=False) as ex:
        natives_at_verdict: dict[int, int] = {}
        futs = [ex.submit(Task(f"op{i}"), src, cfg) for i, src in enumerate(order)]
        for i, f in enumerate(futs):
            f.add_done_callback(lambda _f, i=i: natives_at_verdict.__setitem__(i, len(native_done)))
        for f in futs:
            f.result(timeout=30)
        built = list(ex.build_order)
    # the cheap ones first (the first native build may already have started when they came),
    # then the first source again (a likely cache hit) before the other native build
    assert built in ([0, 3, 4, 2, 1], [3, 4, 0, 2, 1]), built
    assert natives_at_verdict[3] <= 1 and natives_at_verdict[4] <= 1, natives_at_verdict
    assert natives_at_verdict[1] == len(native_done) == 3, natives_at_verdict
    assert rec.judged.index(TRITON) < rec.judged.index(NATIVE_B)
