"""CPU red team, protocol attacks (EVAL_RULES.md #29-#33): the candidate's own hooks around the
worker's trusted steps, a C-level clock swap, and hangs.

Every attack here was judged ``valid`` (or, for the hangs, held the worker for the whole wall
limit) before the evaluator's answer to it: a torch function or dispatch mode pushed at import
and never exited sees the worker's own ``prepare`` step (the task's ``get_inputs()`` runs in the
candidate's process) and computes the answer there, untimed and outside the aten-op counter
(#29); the same kind of mode fills a lazy output when the worker snapshots it (#30); a global
RecordFunction callback registered from C++ does #29 natively (#31); the ``ml_meth`` pointer of
``time.perf_counter_ns`` swapped for a C function that hides forward's extra time (#32); a
native sleep in forward after the checks and a Python ``while True`` from the first call (#33).

Each attack is shown to work outside the harness (``test_attack_works_unguarded``: a replay of
the worker's prepare/go in a plain process, no hooks check), then judged by the real evaluator.
The native cases share ONE extension (``redteam_attack_lib``, byte-identical in each, compiled
once into the build cache's trusted shared tier by the module fixture); the Python cases use
the relu suite's shared ``redteam_relu_lib``. See docs/redteam.md, "Protocol attacks (#29-#33)".
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from sandbox import rules
from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Status

from .redteam import CANDIDATES, CPU_HONEST, REPO, TASKS, Case, config, describe, warm_build_cache

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

R = rules
REJECTED, TIMEOUT, VALID = Status.REJECTED, Status.TIMEOUT, Status.VALID
HANG_BOUND_S = 150.0  # a hang must end in a timeout verdict within this much wall time

# (case, a phrase the verdict's message must carry: what the check saw)
HOOK_CASES: list[tuple[Case, str]] = [
    (Case("cheat_29a_function_mode_prepare", "relu", (REJECTED,), (R.HOOKS,), cheat="29"), "function mode"),
    (Case("cheat_29b_dispatch_mode_prepare", "relu", (REJECTED,), (R.HOOKS,), cheat="29"), "dispatch mode"),
    (Case("cheat_30_mode_lazy_output", "relu", (REJECTED,), (R.HOOKS,), cheat="30"),
     "output snapshot: a torch function mode"),
    (Case("cheat_31_recordfunction_native", "relu", (REJECTED,), (R.HOOKS,), cheat="31"), "RecordFunction"),
]
CLOCK_CASE = Case("cheat_32_c_clock_swap", "relu", (REJECTED,), (R.TIMER_PATCHED,), cheat="32")
# default timeout_s (900 s): the per-call deadlines must end them, not the wall limit
HANG_CASES: list[Case] = [
    Case("cheat_33a_native_sleep_hang", "relu", (TIMEOUT,), (R.TIMEOUT,), cheat="33"),
    # hangs at its first call: ended by the first-call budget (15 s here, 90 s by default)
    Case("cheat_33b_python_hang", "relu", (TIMEOUT,), (R.TIMEOUT,), cheat="33", extra={"first_call_timeout_s": 15.0}),
]
ATTACK_LIB = ("# --- shared protocol-attack extension", "# --- end of shared protocol-attack extension")


@pytest.fixture(scope="module", autouse=True)
def warm_libs():
    """Compile the shared attack extension and the relu extension once, outside any
    evaluation's wall timeout (and its per-call deadlines)."""
    warm_build_cache("cheat_31_recordfunction_native")  # redteam_attack_lib (its import only registers a callback)
    warm_build_cache("cheat_33b_python_hang")  # redteam_relu_lib (defining the hang does not run it)


def judge(case: Case):
    return evaluate(load_task(case.task_path()), case.source(), config(case))


def assert_caught(case: Case, v) -> None:
    assert v.status in case.statuses, f"{case.candidate}: expected {[s.value for s in case.statuses]}; {describe(v)}"
    assert v.rule in case.rules, f"{case.candidate}: expected rule in {case.rules}; {describe(v)}"
    assert not v.speedups, f"a caught cheat must not carry speedups; {describe(v)}"


# -- each attack works when nothing checks for it ------------------------------------------
# A replay of the worker's call path (sandbox/worker/callpath.py: prepare = seed, get_inputs() under
# the device context, blank tensors, poison; go = copy in, clock, forward, clock, snapshot by
# Tensor.clone(out.detach())) in a plain process, with nothing asking for the candidate's hooks.
_REPLAY = r'''
import sys, time
from sandbox.build import buildcache
from sandbox.intake.task import exec_source
import torch

cand_path, task_path, kind = sys.argv[1], sys.argv[2], sys.argv[3]
pc_before = time.perf_counter_ns
buildcache.install(str(buildcache.default_root()) + "/shared")
mod = exec_source(open(cand_path).read(), cand_path, "_kh_candidate")
task = exec_source(open(task_path).read(), task_path, "_kh_task")
for k, v in task.SHAPES["small"].items():
    setattr(task, k, v)
model = mod.ModelNew(*task.get_init_inputs()).eval()
gen = torch.default_generator


def call(seed, before_snapshot=None):
    gen.manual_seed(seed)
    with torch.device("cpu"):
        stash = list(task.get_inputs())
    given = [torch.empty_strided(x.size(), x.stride(), dtype=x.dtype) for x in stash]
    blk = torch.empty(stash[0].numel())
    blk.fill_(float("nan"))
    del blk
    with torch.no_grad():
        given[0].copy_(stash[0])
        t0, m0 = time.perf_counter_ns(), time.monotonic_ns()
        out = model(*given)
        t1, m1 = time.perf_counter_ns(), time.monotonic_ns()
    if before_snapshot:
        before_snapshot(out, stash[0])
    snap = torch.Tensor.clone(out.detach())
    return torch.equal(snap, torch.relu(stash[0])), (t1 - t0) / 1e3, (m1 - m0) / 1e3


if kind == "hang":
    n = int(sys.argv[4])
    for i in range(1, n):
        assert call(i)[0], i
        print("OK", i, flush=True)
    print("CALLING", n, flush=True)
    call(n)
    print("RETURNED", n, flush=True)
    sys.exit(0)

N = 6
unfilled = []
res = [call(100 + i, (lambda o, x: unfilled.append(not torch.equal(o, torch.relu(x)))) if kind == "lazy" else None)
       for i in range(N)]
print("results", res)
assert all(r[0] for r in res), "outputs wrong"
if kind == "mode":
    print("stats", mod._stats)
    assert mod._stats["served"] == N and mod._stats["precomputed"] >= N
elif kind == "lazy":
    print("stats", mod._stats, "unfilled when forward returned", unfilled)
    assert mod._stats["filled"] == N and all(unfilled)
elif kind == "native_rf":
    pre, served = mod._atk.rf_counts()
    print("precomputed", pre, "served", served)
    assert served == N and pre >= N
elif kind == "clock":
    same = time.perf_counter_ns is pc_before
    print("same object", same, "perf_counter_ns us", [r[1] for r in res], "monotonic_ns us", [r[2] for r in res])
    med = lambda v: sorted(v)[len(v) // 2]
    # medians: a loaded box may preempt one call for milliseconds; the hidden 1.5 ms is in every call
    assert same and med([r[1] for r in res]) < 1000 and med([r[2] - r[1] for r in res]) >= 1450
print("ATTACK WORKS")
'''

_REPLAY_KIND = {
    "cheat_29a_function_mode_prepare": "mode",
    "cheat_29b_dispatch_mode_prepare": "mode",
    "cheat_30_mode_lazy_output": "lazy",
    "cheat_31_recordfunction_native": "native_rf",
    "cheat_32_c_clock_swap": "clock",
}


def _replay_args(stem: str, *extra: str) -> list[str]:
    return [sys.executable, "-c", _REPLAY, str(CANDIDATES / f"{stem}.py"), str(TASKS / "relu.py"), *extra]


@pytest.mark.parametrize("stem", sorted(_REPLAY_KIND))
def test_attack_works_unguarded(stem: str):
    """The attack does what its docstring says (precomputed in prepare / filled at the
    snapshot / hidden from the clock) and the output is right: only the evaluator's checks
    stand between it and a valid verdict."""
    r = subprocess.run(_replay_args(stem, _REPLAY_KIND[stem]), cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ATTACK WORKS" in r.stdout, f"{stem}: rc={r.returncode}\n{r.stdout}\n{r.stderr[-3000:]}"


@pytest.mark.parametrize(("stem", "n"), [("cheat_33a_native_sleep_hang", 12), ("cheat_33b_python_hang", 1)])
def test_hang_hangs_unguarded(stem: str, n: int):
    """Calls before the n-th return relu; the n-th does not return within 3 s."""
    p = subprocess.Popen(_replay_args(stem, "hang", str(n)), cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        seen = []
        for line in p.stdout:  # blocks until CALLING (import + n-1 calls) or the process ends
            seen.append(line.strip())
            if line.startswith("CALLING"):
                break
        assert seen and seen[-1] == f"CALLING {n}", seen
        assert seen[:-1] == [f"OK {i}" for i in range(1, n)], seen
        time.sleep(3.0)
        assert p.poll() is None, f"{stem}: call {n} returned: {seen}"
    finally:
        p.kill()
        p.wait()


# -- the evaluator's answers ----------------------------------------------------------------
@pytest.mark.parametrize(("case", "phrase"), [pytest.param(c, s, id=c.id) for c, s in HOOK_CASES])
def test_hooks_around_trusted_steps_are_rejected(case: Case, phrase: str):
    """#29-#31: a mode or a foreign RecordFunction callback alive at a trusted step."""
    v = judge(case)
    assert_caught(case, v)
    assert phrase in v.message, describe(v)


def test_c_clock_swap_is_rejected():
    """#32: perf_counter_ns's C entry point swapped under the same function object."""
    v = judge(CLOCK_CASE)
    assert_caught(CLOCK_CASE, v)  # at the import's monitor report, before any call is timed
    assert "perf_counter_ns" in v.message and v.message.startswith("import:"), describe(v)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in HANG_CASES])
def test_hang_times_out_per_call(case: Case):
    """#33: ended by the deadline of the call that hangs, long before the 900 s wall limit;
    the message names the request and its bound."""
    assert case.timeout_s >= 600, "the wall limit must not be what ends it"
    t0 = time.monotonic()
    v = judge(case)
    dt = time.monotonic() - t0
    assert_caught(case, v)
    assert dt < HANG_BOUND_S, f"{case.candidate}: {dt:.0f} s to a timeout verdict; {describe(v)}"
    assert re.search(r"request ran .* past its bound", v.message), describe(v)


# -- honest control --------------------------------------------------------------------------
def test_honest_relu_is_still_valid_with_the_hooks_checks():
    case = next(c for c in CPU_HONEST if c.candidate == "honest_cpu_relu")
    v = judge(case)
    assert v.status is VALID, describe(v)
    assert v.rule is None and v.speedups.get("eager") is not None, describe(v)


# -- hygiene ---------------------------------------------------------------------------------
def test_shared_protocol_attack_extension_is_byte_identical():
    """Build-cache hits need the same load_inline source and flags in every user."""
    users = sorted(p for p in CANDIDATES.glob("cheat_*.py") if "redteam_attack_lib" in p.read_text())
    assert {p.stem for p in users} >= {"cheat_31_recordfunction_native", "cheat_32_c_clock_swap",
                                       "cheat_33a_native_sleep_hang"}, users
    blocks = set()
    for p in users:
        m = re.search(re.escape(ATTACK_LIB[0]) + r".*?" + re.escape(ATTACK_LIB[1]), p.read_text(), re.S)
        assert m, p.name
        blocks.add(m.group(0))
    assert len(blocks) == 1
