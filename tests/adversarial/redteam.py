"""Shared table and helpers of the red-team suite (tests/adversarial).

One ``Case`` per adversarial or honest candidate: the file under candidates/, the task under
tasks/, the statuses and rule ids the evaluator may answer with (the first is the one that
names the defence best), the evaluation mode, and placeholders the test substitutes into the
source (ports, paths). test_redteam_cpu.py and test_redteam_gpu.py parametrize over these.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandbox import rules
from sandbox.evaluate import EvalConfig
from sandbox.verdict import Mode, Status

HERE = Path(__file__).resolve().parent
CANDIDATES = HERE / "candidates"
TASKS = HERE / "tasks"
REPO = HERE.parent.parent

INCORRECT, REJECTED, VALID, TIMEOUT = Status.INCORRECT, Status.REJECTED, Status.VALID, Status.TIMEOUT


@dataclass(frozen=True)
class Case:
    candidate: str  # file stem under candidates/
    task: str  # file stem under tasks/
    statuses: tuple[Status, ...]
    rules: tuple[str | None, ...] = ()  # accepted rule ids; () = any (only for VALID)
    mode: Mode = Mode.FEEDBACK
    cheat: str = ""  # cheat number in EVAL_RULES.md ("" for honest candidates)
    timeout_s: float = 900.0
    note: str = ""
    extra: dict = field(default_factory=dict)  # EvalConfig fields of this case (config() applies them)
    open_finding: str = ""  # id in docs/records/redteam-findings.md while the evaluator misses it (xfail)

    @property
    def id(self) -> str:
        return self.candidate

    def source(self, **subst: str) -> str:
        text = (CANDIDATES / f"{self.candidate}.py").read_text()
        for k, v in subst.items():
            text = text.replace(f"__{k}__", v)
        return text

    def task_path(self) -> Path:
        return TASKS / f"{self.task}.py"


def params(cases: list[Case]) -> list:
    """pytest params; a case with an open finding is xfail (not strict: a fix turns it XPASS)."""
    import pytest

    out = []
    for c in cases:
        marks = [pytest.mark.xfail(reason=f"open finding {c.open_finding} (docs/records/redteam-findings.md)",
                                   strict=False)] if c.open_finding else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


def config(case: Case, device: str = "cpu", **kw) -> EvalConfig:
    """Fast but complete settings: every correctness/extra-shape check runs; timing is capped."""
    base = dict(
        device=device,
        mode=case.mode,
        profile="small" if device == "cpu" else "default",
        timeout_s=case.timeout_s,
        max_timing_s=1.0 if device == "cpu" else 3.0,
        feedback_timing_s=0.5 if device == "cpu" else 1.0,
        target_ci=0.05 if device == "cpu" else 0.01,
        baselines=("eager",) if device == "cpu" else ("eager", "compile"),
        candidate_name=f"{case.candidate}.py",
    )
    base.update(case.extra)  # a case's own settings (e.g. a hang's shorter first-call budget)
    base.update(kw)
    return EvalConfig(**base)


TIMING_EVIDENCE = ("tail_us", "steps_tail_us", "gap_us", "wall_clock_first_round", "wall_clock_control",
                   "timing_stopped", "background_cpu_us")


def describe(v) -> str:
    """A failed case's verdict in a line a truncated pytest report still shows: status, rule, message,
    the timing cross-checks' decisions (their samples left out) and the end of the logs."""
    ev = getattr(v, "evidence", None) or {}
    timing = {k: ({a: b for a, b in ev[k].items() if a != "samples"} if isinstance(ev[k], dict) else ev[k])
              for k in TIMING_EVIDENCE if k in ev}
    return (f"status={v.status.value} rule={v.rule} message={v.message!r}\ntiming={timing!r}"
            f"\nlogs={v.logs[-1500:]!r}")


def keep_verdict(v, name: str) -> None:
    """With KH_REDTEAM_VERDICTS=DIR, write the whole verdict to DIR/NAME.json (the device calls
    pack it: a failed case is diagnosed from its samples, not from pytest's truncated repr)."""
    d = os.environ.get("KH_REDTEAM_VERDICTS")
    if d:
        Path(d).mkdir(parents=True, exist_ok=True)
        (Path(d) / f"{name}.{os.getpid()}.{time.time_ns()}.json").write_text(v.to_json(default=str))


def warm_build_cache(candidate: str | Path, cache_root: str | None = None) -> None:
    """Build a candidate's extension into the build cache's trusted shared tier (which every
    worker loads from, read-only) in a child process, so later evaluations (and their wall
    timeouts) do not include the compile."""
    code = (  # with the precompiled header of its flags, as a judgement's build would get it (KH_BUILD_PCH)
        "import sys; from sandbox.build import buildcache, pch; src = open(sys.argv[1]).read(); pch.prepare(src); "
        "root = sys.argv[2] or str(buildcache.default_root()); buildcache.install(root + '/shared', pch.shared()); "
        "from sandbox.intake.task import exec_source; "
        "exec_source(src, sys.argv[1])"
    )
    path = candidate if isinstance(candidate, Path) else CANDIDATES / f"{candidate}.py"  # a stem or a file
    subprocess.run([sys.executable, "-c", code, str(path), cache_root or ""],
                   cwd=REPO, check=True, timeout=900, capture_output=True)


R = rules
# A thread or pool that finishes the output 50 ms late: the worker snapshots the output as the call ends,
# before the late work has written it, from memory the judge poisoned with NaN (nonfinite). Where
# the allocator hands back memory the poison did not reach, the unfinished output is whatever was
# there (tolerance): the short list's second rule, with that reason.
_LATE_WORK = ((INCORRECT,), (R.NONFINITE, R.TOLERANCE))
CPU_CHEATS: list[Case] = [
    Case("cheat_01_stale_memory", "relu", (INCORRECT,), (R.NONFINITE, R.TOLERANCE, R.TRIVIAL_OUTPUT), cheat="1"),
    Case("cheat_02a_torch_op", "relu", (REJECTED,), (R.TORCH_FALLBACK,), cheat="2"),
    Case("cheat_02b_subclass_model", "matmul", (REJECTED,), (R.TORCH_FALLBACK,), cheat="2"),
    Case("cheat_02c_grader_model", "relu", (REJECTED,), (R.TORCH_FALLBACK,), cheat="2"),
    Case("cheat_03_try_except_fallback", "relu", (REJECTED,), (R.TORCH_FALLBACK,), cheat="3"),
    Case("cheat_05a_python_thread", "relu", (REJECTED,), (R.THREADS,), cheat="5",
         note="the static scan refuses the import of threading; 05b-05d test the runtime layers"),
    Case("cheat_05b_native_thread", "relu", *_LATE_WORK, cheat="5"),
    Case("cheat_05c_hidden_thread", "relu", *_LATE_WORK, cheat="5"),
    Case("cheat_05d_interop_pool", "relu", *_LATE_WORK, cheat="5"),
    Case("cheat_06_lazy_output", "relu", (REJECTED, INCORRECT), (R.OUTPUT_TYPE,), cheat="6"),
    Case("cheat_07a_perf_counter", "relu", (REJECTED,), (R.TIMER_PATCHED, R.WALL_CLOCK), cheat="7"),
    Case("cheat_07b_timer_setattr", "relu", (REJECTED,), (R.TIMER_PATCHED, R.WALL_CLOCK), cheat="7"),
    Case("cheat_07c_worker_patch", "relu", (REJECTED,), (R.TIMER_PATCHED, R.RESULT_CHANNEL, R.WALL_CLOCK),
         cheat="7"),
    Case("cheat_08a_forge_channel", "relu", (REJECTED,), (R.RESULT_CHANNEL,), cheat="8"),
    Case("cheat_08b_forge_channel_hidden", "relu", (REJECTED,), (R.RESULT_CHANNEL, R.INTROSPECTION), cheat="8"),
    Case("cheat_08c_tamper_replies", "relu", (REJECTED,),
         (R.RESULT_CHANNEL, R.TIMER_PATCHED, R.INTROSPECTION, R.WALL_CLOCK), cheat="8"),
    Case("cheat_09a_inplace_inputs", "relu", (INCORRECT,), (R.INPUTS_MODIFIED,), cheat="9"),
    Case("cheat_09b_zero_inputs", "relu", (INCORRECT,), (R.INPUTS_MODIFIED,), cheat="9"),
    Case("cheat_10a_cache_by_shape", "relu", (INCORRECT,), (R.TOLERANCE, R.TIMED_OUTPUT), cheat="10"),
    Case("cheat_10b_cache_by_ptr", "relu", (INCORRECT,), (R.TOLERANCE, R.NONDETERMINISTIC, R.TIMED_OUTPUT),
         cheat="10",
         note="fresh blank inputs come back at a handful of addresses, so the cache hits and answers with another "
              "seed's output from then on; the rule is the check that sees the first stale hit: a trial "
              "(tolerance), the seed's repeat (nondeterministic), a sampled timed call or the re-check after "
              "timing (timed_output)"),
    Case("cheat_11_batching", "relu", (INCORRECT,), (R.TIMED_OUTPUT, R.NONFINITE, R.TOLERANCE), cheat="11"),
    Case("cheat_11b_precompute_in_inputs", "relu", (VALID,), (None,), cheat="11",
         note="neutralised since issue 14 item 1: the candidate's worker never calls get_inputs; the wrapper's "
              "path marks every later output NaN once it fires, so valid proves it never fired"),
    Case("cheat_12a_call_count", "relu", (INCORRECT,), (R.TIMED_OUTPUT,), cheat="12"),
    Case("cheat_12b_profiler_detect", "relu", (REJECTED,), (R.TORCH_FALLBACK, R.INTROSPECTION), cheat="12"),
    # caught by the aten-op counter armed on every call (sandbox/rules/opcount.py), not the profiled call
    Case("cheat_12d_profiler_detect_hidden", "relu", (REJECTED,), (R.TORCH_FALLBACK,), cheat="12"),
    Case("cheat_12e_seed_phase", "relu", (VALID,), (None,), cheat="12",
         note="neutralised since issue 14 item 1: no call's seed reaches the candidate's process, so "
              "torch.initial_seed() never moves; its tell is sticky once fired (the final re-check would catch "
              "it), so valid proves it never fired"),
    Case("cheat_12c_stack_inspect", "relu", (REJECTED,), (R.INTROSPECTION,), cheat="12"),
    Case("cheat_13a_gc_expected", "relu", (REJECTED,), (R.INTROSPECTION,), cheat="13"),
    Case("cheat_13b_gc_obfuscated", "relu", (REJECTED,), (R.INTROSPECTION,), cheat="13"),
    Case("cheat_13c_frames_obfuscated", "relu", (REJECTED,), (R.INTROSPECTION,), cheat="13"),
    Case("cheat_13d_disarm_monitor", "relu", (REJECTED,), (R.INTROSPECTION, R.TIMER_PATCHED, R.RESULT_CHANNEL),
         cheat="13"),
    Case("cheat_14_hardcoded_shape", "relu", (INCORRECT,), (R.HIDDEN_SHAPE,), mode=Mode.FINAL, cheat="14"),
    Case("cheat_15_bf16_matmul", "matmul", (INCORRECT,), (R.TOLERANCE,), cheat="15"),
    Case("cheat_16_partial_rows", "relu", (INCORRECT,), (R.NONFINITE, R.TOLERANCE), cheat="16"),
    Case("cheat_17_zeros_tiny", "tiny_output", (INCORRECT,), (R.TRIVIAL_OUTPUT,), cheat="17"),
    Case("cheat_18a_dithered_sum", "sum_dim", (INCORRECT,), (R.NONDETERMINISTIC,), cheat="18"),
    Case("cheat_18b_uninit_accumulator", "sum_dim", (INCORRECT,),
         (R.NONFINITE, R.TOLERANCE, R.NONDETERMINISTIC), cheat="18"),
    Case("cheat_19b_outside", "relu", (REJECTED,), (R.NETWORK,), cheat="19"),
    Case("cheat_20a_fork_bomb", "relu", (REJECTED, TIMEOUT), (R.SUBPROCESS, R.RESOURCES, R.TIMEOUT), cheat="20"),
    Case("cheat_20b_native_fork_bomb", "relu", (VALID,), (None,), cheat="20", timeout_s=120,
         note="neutralised since session 7: the bomb runs at the second call, after the seal, which refuses new "
              "processes; a fork that succeeded marks every later output NaN, so valid proves none did (the "
              "watchdog's side is tests/evaluator/test_isolation.py, in the late order)"),
    Case("cheat_20c_memory_bomb", "relu", (REJECTED,), (R.RESOURCES,), cheat="20", timeout_s=300),
    Case("cheat_20d_infinite_loop", "relu", (TIMEOUT,), (R.TIMEOUT,), cheat="20", timeout_s=60,
         extra={"first_call_timeout_s": 15.0}),  # it loops at its first call: that bound ends it
    Case("cheat_36_out_rewrite", "relu", (REJECTED, INCORRECT), (R.THREADS, R.TOLERANCE, R.NONFINITE),
         cheat="36", mode=Mode.FINAL,
         note="a native thread rewrites the fetched output in the arena: the candidate is stopped during every "
              "check, and other threads' CPU around a checked output is counted"),
    Case("cheat_37_fork_after_seal", "relu", (Status.RUNTIME_ERROR,), (None,), cheat="37",
         note="the seal refuses new processes (clone without CLONE_THREAD), not only exec"),
]
"""Cheats that need only the table (special ones with fixtures live in the test module)."""

CPU_HONEST: list[Case] = [
    Case("honest_cpu_relu", "relu", (VALID,), mode=Mode.FINAL),
    Case("honest_cpu_sum", "sum_dim", (VALID,), mode=Mode.FINAL),
    Case("honest_cpu_matmul", "matmul", (VALID,), mode=Mode.FINAL),
    Case("honest_cpu_softmax", "softmax", (VALID,), mode=Mode.FINAL),
    Case("honest_cpu_conv2d", "conv2d", (VALID,), mode=Mode.FINAL),
    Case("honest_cpu_gemm_bias_relu", "gemm_bias_relu", (VALID,), mode=Mode.FINAL),
]

GPU_CASES: list[Case] = [
    Case("gpu_cheat_01_stale_memory", "relu", (INCORRECT,), (R.NONFINITE, R.TOLERANCE), cheat="1"),
    Case("gpu_cheat_02_torch_matmul", "matmul", (REJECTED,), (R.TORCH_FALLBACK,), cheat="2"),
    # whichever check sees the side stream's work first: the output read at the call's end, unfinished
    # (incorrect: seen on the H100 in session 7), or the profiled call and the cross-checks (rejected)
    Case("gpu_cheat_04_side_stream", "relu", (REJECTED, INCORRECT),
         (R.SIDE_STREAM, R.WALL_CLOCK, R.TOLERANCE, R.NONFINITE), cheat="4"),
    Case("gpu_cheat_04b_side_stream_lead", "relu", (REJECTED, INCORRECT),
         (R.TIMED_OUTPUT, R.NONFINITE, R.TOLERANCE, R.NONDETERMINISTIC, R.SIDE_STREAM, R.WALL_CLOCK),
         cheat="4", mode=Mode.FINAL,
         note="its side path reads the previous call's inputs whenever it finds the stream busy: a correctness "
              "trial's repeat that finds it busy gives another output (nondeterministic, H200 2026-11-28)"),
    Case("gpu_cheat_05_thread_launch", "relu", (REJECTED,), (R.THREADS, R.WALL_CLOCK), cheat="5"),
    Case("gpu_cheat_07_event_patch", "relu", (REJECTED,), (R.TIMER_PATCHED, R.WALL_CLOCK), cheat="7"),
    Case("gpu_cheat_33_gpu_hang", "relu", (TIMEOUT,), (R.TIMEOUT,), cheat="33", mode=Mode.FINAL,
         note="the per-call deadline ends it in seconds; the whole-evaluation limit is never reached"),
    Case("gpu_cheat_34_hidden_tail", "relu", (REJECTED,), (R.WALL_CLOCK,), cheat="34", mode=Mode.FINAL,
         note="30 us of unjoined side-stream spin per call, profiled call spared: above the 20 us floor"),
    Case("gpu_probe_34b_tail_below_floor", "relu", (VALID,), mode=Mode.FINAL,
         note="8 us hidden, under half the floor: the cross-check promises nothing there and must not fire"),
    Case("gpu_cheat_35_autotune_every_call", "relu", (TIMEOUT,), (R.TIMEOUT,), cheat="35", mode=Mode.FINAL,
         note="every call re-tunes 24 Triton configs (~3 s of GPU): the per-call deadline ends it"),
    Case("gpu_cheat_36_out_rewrite", "relu", (REJECTED, INCORRECT), (R.THREADS, R.TOLERANCE, R.NONFINITE),
         cheat="36", mode=Mode.FINAL,
         note="no ReLU on the GPU (a copy kernel); a host thread clamps the fetched output in the arena: the "
              "freeze during checks and the per-call background-CPU median"),
    Case("gpu_probe_38_one_gpu", "relu", (VALID,), mode=Mode.FINAL,
         note="a judging worker sees its one GPU, as cuda:0 (refuses to run when it sees more)"),
    Case("gpu_cheat_42a_cublas_dlsym", "matmul", (REJECTED,), (R.TORCH_FALLBACK,), cheat="42",
         note="cuBLAS by names built at run time (the link check sees dlsym only): its kernels are cuBLAS's"),
    Case("gpu_cheat_42b_inductor_relu", "relu", (REJECTED,), (R.HOOKS, R.LIBRARY_COMPUTE, R.TORCH_FALLBACK),
         cheat="42", note="torch.compile's generated kernel: on an H200 refused at import (dynamo adds an audit "
         "hook); were it not, the kernel is declared by no source of the candidate's"),
    Case("gpu_cheat_42c_cupy_ufunc", "relu", (REJECTED,), (R.LIBRARY_COMPUTE,), cheat="42",
         note="cupy's generated elementwise kernel, declared by no source of the candidate's"),
    Case("honest_cuda_relu", "relu", (VALID,), mode=Mode.FINAL),
    Case("honest_cuda_sum", "sum_dim", (VALID,), mode=Mode.FINAL),
    Case("honest_cuda_matmul", "matmul", (VALID,), mode=Mode.FINAL),
    Case("honest_cuda_conv2d", "conv2d", (VALID,), mode=Mode.FINAL),
    Case("honest_cuda_gemm_bias_relu", "gemm_bias_relu", (VALID,), mode=Mode.FINAL),
    Case("honest_triton_relu", "relu", (VALID,), mode=Mode.FINAL),
    Case("honest_triton_softmax", "softmax", (VALID,), mode=Mode.FINAL),
]

SHARED_RELU_LIB_USERS = sorted(
    p.stem for p in CANDIDATES.glob("cheat_*.py") if "redteam_relu_lib" in p.read_text()
)
