"""The evaluation result: a typed, versioned record of one judgement of one candidate.

Everything that leaves the evaluator is a ``Verdict``. It is plain data (dataclasses that
round-trip through JSON), so the store, the leaderboard and ``harness eval --json`` all read
the same thing. Bump ``SCHEMA_VERSION`` when a field changes meaning; ``from_dict`` ignores
unknown keys so old readers survive new fields.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1


class Status(str, enum.Enum):  # noqa: UP042 (str() stays the member name)
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    INCORRECT = "incorrect"
    REJECTED = "rejected"
    VALID = "valid"


class Mode(str, enum.Enum):  # noqa: UP042
    FEEDBACK = "feedback"  # what a method sees during search: public inputs, short timing
    FINAL = "final"  # hidden seed, extra shapes, full protocol, baselines


@dataclass
class Trial:
    """One correctness trial: one input draw (and shape) compared with the reference."""

    index: int
    shape_label: str  # "default", "small", "extra0", ...
    passed: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatch_fraction: float | None = None
    note: str = ""
    # per output: the smallest atol=rtol it passes, max |out-ref|/(1+|ref|); None where none does
    # (NaN/inf where the reference is finite, an unmatched non-finite reference, integers that differ)
    tightest_tol: list[float | None] = field(default_factory=list)


@dataclass
class Measurement:
    """Timing samples of one callable, summarised. Times in microseconds."""

    median_us: float
    ci_low_us: float
    ci_high_us: float
    n: int
    converged: bool  # CI half-width < target fraction of the median before the time cap
    mean_us: float | None = None
    stdev_us: float | None = None
    samples_us: list[float] = field(default_factory=list)  # kept for significance tests


@dataclass
class Speedup:
    """baseline median / candidate median, with a CI and a one-sided Mann-Whitney test."""

    baseline: str  # "eager" | "compile"
    value: float
    ci_low: float
    ci_high: float
    p_value: float | None  # H1: candidate faster than baseline
    significant: bool  # p < alpha (0.05)


@dataclass
class Verdict:
    status: Status
    message: str = ""
    rule: str | None = None  # id of the rule that fired (see sandbox/rules/__init__.py), if any
    evidence: dict[str, Any] = field(default_factory=dict)
    mode: Mode = Mode.FEEDBACK
    device: str = "cpu"
    task: str = ""
    candidate_sha256: str = ""
    trials: list[Trial] = field(default_factory=list)
    timings: dict[str, Measurement] = field(default_factory=dict)  # candidate/eager/compile
    speedups: dict[str, Speedup] = field(default_factory=dict)  # keyed by baseline
    speed_of_light: dict[str, float] = field(default_factory=dict)  # pct_memory, pct_compute
    profile: dict[str, Any] = field(default_factory=dict)  # kernels launched, aten ops seen
    allow_torch_ops: bool = False
    rules: str = "strict"  # the rule set that judged it (sandbox/rules/__init__.py RULE_SETS); older verdicts: strict
    host_timers: bool = False  # True on CPU: never leaderboard numbers
    environment: dict[str, Any] = field(default_factory=dict)
    logs: str = ""  # truncated compiler/runtime output
    durations_s: dict[str, float] = field(default_factory=dict)  # compile, check, time, total
    tolerance: dict[str, Any] = field(default_factory=dict)  # tolerance evidence: tolerance_evidence()
    schema_version: int = SCHEMA_VERSION

    @property
    def valid(self) -> bool:
        return self.status is Status.VALID

    # -- serialisation -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["status"] = self.status.value
        d["mode"] = self.mode.value
        return d

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        known = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        kw["status"] = Status(kw["status"])
        kw["mode"] = Mode(kw.get("mode", "feedback"))
        kw["trials"] = [_load(Trial, t) for t in kw.get("trials", [])]
        kw["timings"] = {k: _load(Measurement, v) for k, v in kw.get("timings", {}).items()}
        kw["speedups"] = {k: _load(Speedup, v) for k, v in kw.get("speedups", {}).items()}
        return cls(**kw)

    @classmethod
    def from_json(cls, s: str) -> Verdict:
        return cls.from_dict(json.loads(s))


KERNELBENCH_TOL = 1e-2  # KernelBench v0.1's atol = rtol (torch.allclose)


def tolerance_evidence(trials: list[Trial], atol: float, rtol: float) -> dict[str, Any]:
    """How far from the reference the candidate was, over the trials that ran: the rule's atol and
    rtol (which decide the verdict), the worst max abs and max rel error, the tightest atol=rtol
    every output of every trial passes (None: none does), per output and overall, and whether
    that is within KernelBench v0.1's 1e-2, for comparison with results judged that way."""
    measured = [t for t in trials if t.tightest_tol]
    if not measured:
        return {}
    n_out = max(len(t.tightest_tol) for t in measured)
    per_output: list[float | None] = []
    for i in range(n_out):
        vals = [t.tightest_tol[i] for t in measured if i < len(t.tightest_tol)]
        per_output.append(None if any(v is None for v in vals) else max(vals))
    tightest = None if any(v is None for v in per_output) else max(per_output)
    return {
        "atol": atol, "rtol": rtol,
        "max_abs_err": max((t.max_abs_err or 0.0) for t in measured),
        "max_rel_err": max((t.max_rel_err or 0.0) for t in measured),
        "tightest": tightest, "tightest_per_output": per_output,
        "passes_1e-2": tightest is not None and tightest <= KERNELBENCH_TOL,
        "trials": len(measured),
    }


def _load(kind: type, d: dict[str, Any]) -> Any:
    known = {f.name for f in dataclasses.fields(kind)}
    return kind(**{k: v for k, v in d.items() if k in known})
