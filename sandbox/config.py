"""``EvalConfig``: how one judgement runs (part of the evaluator's contract, with the verdict
types in sandbox/verdict.py and the errors in sandbox/errors.py). A leaf: the judging modules
and the harness import it; it imports nothing of the judging path."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.verdict import Mode


@dataclass(frozen=True)
class EvalConfig:
    mode: Mode = Mode.FEEDBACK
    device: str = "cpu"  # "cpu" | "cuda" | "cuda:N"
    sandbox: str = "process"  # "process" | "docker"
    seed: int | None = None  # None: a secret seed drawn per evaluation (final mode always)
    timeout_s: float = 600.0  # whole evaluation, compile included
    allow_torch_ops: bool = False  # research use only; recorded in the verdict
    profile: str = "default"  # shape profile for the public inputs ("small" for CPU tests)
    correctness_trials: int = 5
    baselines: tuple[str, ...] = ("eager", "compile")  # final mode; feedback uses ("eager",)
    max_timing_s: float = 10.0  # time cap per measured callable (adaptive stopping)
    target_ci: float = 0.01  # stop when the CI half-width < target_ci * median
    build_dir: str | None = None  # shared build cache root; None = the default cache
    # -- additive fields (evaluator helper) --
    feedback_timing_s: float = 1.5  # time cap per callable in feedback mode
    hidden_paths: tuple[str, ...] = ()  # dirs masked inside the sandbox (results dir, ...)
    check_fraction: float = 0.15  # share of timed candidate calls whose output is checked
    candidate_name: str = "candidate.py"  # file name shown in messages
    memory_limit_gb: float | None = None  # None: CPU min(8 GiB, 35% of RAM) RSS; GPU 64 GiB
    unsafe_no_isolation: bool = False  # judge even where no jail can be made (recorded: isolation none)
    first_call_timeout_s: float = 90.0  # one budget for a judgement's first calls, every profile and order (sandbox/lane/firstcall.py)
    file_size_limit_bytes: int | None = None  # workers' RLIMIT_FSIZE (None: Limits' default); no output travels in a file
    gpu_hold_s: float = 120.0  # bound on holding the GPU after warm-up (CUDA; compile and first calls excluded)
    # baselines timed by an earlier valid judgement of the op in this process are reused, checked
    # by a sentinel share of fresh calls (sandbox/timing/baselinebook.py). Off by default: on the H100 it
    # saved nothing on a CUDA relu (a timed baseline call costs ~ms; docs/performance.md), and a
    # pooled measurement depends on the judgements before it
    reuse_baselines: bool = False
    rules: str = "strict"  # rule set: "strict" (no torch compute) | "partial" (sandbox/rules/partial.py); recorded
    # judge a task the check task.degenerate refuses (sandbox/intake/taskcheck.py: its output does not change
    # when inputs and weights are redrawn); research use, recorded in the verdict (evidence.allow_degenerate)
    allow_degenerate: bool = False

    def __post_init__(self) -> None:
        from sandbox.rules import RULE_SETS

        if self.rules not in RULE_SETS:
            raise ValueError(f"EvalConfig.rules must be one of {', '.join(RULE_SETS)} (--rules), "
                             f"not {self.rules!r}")
