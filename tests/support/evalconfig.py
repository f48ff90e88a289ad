"""The one fast-but-complete judging configuration of the CPU tests.

Every correctness check runs (all trials, extra shapes in final mode, every timing cross-check);
only the timing phase is capped, so a CPU test judges a candidate in seconds. The same settings
in the three forms tests need them:

    fast_config(**kw)        an EvalConfig, for evaluate() in the test process
    FAST_OVERRIDES           RunConfig(eval_overrides=...) for the runner in the test process
    FAST_EVAL_OPTIONS        ``harness run --eval-option`` arguments for the CLI
"""

from __future__ import annotations

from typing import Any

from sandbox.config import EvalConfig
from sandbox.verdict import Mode

FAST: dict[str, Any] = dict(
    device="cpu", mode=Mode.FEEDBACK, profile="small", timeout_s=300.0, max_timing_s=0.3,
    feedback_timing_s=0.3, target_ci=0.05, baselines=("eager",), seed=1234,
)  # fmt: skip
# the runner picks device, mode, profile and seed itself; these are its timing caps
FAST_OVERRIDES: dict[str, Any] = {"max_timing_s": 0.3, "feedback_timing_s": 0.3, "correctness_trials": 2}
FAST_EVAL_OPTIONS: list[str] = [a for k, v in FAST_OVERRIDES.items() for a in ("--eval-option", f"{k}={v}")]


def fast_config(**kw: Any) -> EvalConfig:
    """``FAST`` with ``kw`` on top (a test names only what it is about)."""
    if isinstance(kw.get("mode"), str):
        kw["mode"] = Mode(kw["mode"])
    return EvalConfig(**{**FAST, **kw})
