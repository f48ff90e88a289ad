"""Shared pieces of the built-in methods: the Solution record, asking the LLM for one
proposal, reading runtimes and profile summaries out of verdicts, and per-op seeded RNGs.

Methods stay stateless across ops (the runner may optimise several ops at once in threads):
everything an ``optimize`` call learns lives in its own locals.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.llm.base import CallContext, ChatModel
from harness.methods.base import Proposal, TaskContext
from harness.methods.reply import ParsedReply, parse_reply
from sandbox.contract import Status, Verdict


@dataclass
class Solution:
    """One evaluated kernel as a method remembers it."""

    code: str
    name: str = ""
    thought: str = ""  # the insight (EvoEngineer I3) / idea (EoH)
    runtime_us: float | None = None  # candidate median in feedback mode; None unless valid
    valid: bool = False
    status: str = ""  # verdict status value
    summary: str = ""  # one-line verdict summary for prompts
    profile: str = ""  # profile summary for prompts
    candidate_id: int | None = None
    trial: int = -1  # order in which it was produced (0-based)
    operator: str = ""
    parent_ids: list[int] = field(default_factory=list)
    eager_us: float | None = None  # the PyTorch eager time its verdict measured, if any

    @property
    def fitness(self) -> float:
        """Lower is better; invalid solutions rank after every valid one."""
        return self.runtime_us if self.valid and self.runtime_us is not None else float("inf")

    @classmethod
    def from_proposal(cls, p: Proposal, trial: int = -1) -> Solution:
        v = p.verdict
        valid = bool(v is not None and v.valid)
        return cls(
            code=p.source,
            name=p.name,
            thought=p.thought,
            runtime_us=candidate_runtime(v) if valid else None,
            valid=valid,
            status=v.status.value if v is not None else ("parse_error" if p.parse_error else ""),
            summary=verdict_summary(v) if v is not None else (p.parse_error or ""),
            profile=profile_summary(v) if v is not None else "",
            candidate_id=p.candidate_id,
            trial=trial,
            operator=p.operator,
            parent_ids=list(p.parent_ids),
            eager_us=eager_runtime(v),
        )


def candidate_runtime(v: Verdict | None) -> float | None:
    if v is None or "candidate" not in v.timings:
        return None
    return v.timings["candidate"].median_us


def eager_runtime(v: Verdict | None) -> float | None:
    if v is None or "eager" not in v.timings:
        return None
    return v.timings["eager"].median_us


def speedup_vs_eager(v: Verdict | None) -> float | None:
    if v is None or not v.valid:
        return None
    if "eager" in v.speedups:
        return v.speedups["eager"].value
    c, e = candidate_runtime(v), eager_runtime(v)
    return e / c if c and e else None


def verdict_summary(v: Verdict, limit: int = 300) -> str:
    """One line a prompt can carry: status, rule, runtime, message head."""
    if v.status is Status.VALID:
        rt = candidate_runtime(v)
        sp = speedup_vs_eager(v)
        parts = ["valid"]
        if rt is not None:
            parts.append(f"{rt:.1f} us")
        if sp is not None:
            parts.append(f"{sp:.2f}x vs PyTorch eager")
        return ", ".join(parts)
    head = (v.message or "").strip().splitlines()
    msg = head[0] if head else ""
    rule = f" [{v.rule}]" if v.rule else ""
    return f"{v.status.value}{rule}: {msg}"[:limit]


def profile_summary(v: Verdict | None, limit: int = 400) -> str:
    """A compact text of the verdict's profile dict (kernels launched, aten ops seen, ...)."""
    if v is None or not v.profile:
        return ""
    parts = []
    for k, val in v.profile.items():
        if isinstance(val, dict):
            items = sorted(
                val.items(), key=lambda kv: -kv[1] if isinstance(kv[1], (int, float)) else 0
            )
            val = ", ".join(f"{a}={b}" for a, b in items[:5])
        elif isinstance(val, (list, tuple)):
            val = ", ".join(str(x) for x in list(val)[:5])
        parts.append(f"{k}: {val}")
    return "; ".join(parts)[:limit]


def method_rng(task: TaskContext, method: str, salt: str = "") -> random.Random:
    """A RNG fixed by (run seed, op, method): same seed, same choices, whatever the thread order."""
    h = hashlib.sha256(f"{task.seed}|{task.op}|{method}|{salt}".encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


def ask(
    llm: ChatModel,
    messages: list[dict[str, str]],
    *,
    task: TaskContext,
    method: str,
    trial: int,
    operator: str,
    parents: list[Solution] | None = None,
    temperature: float | None = None,
    model: str | None = None,
    stage: str = "",
    parse: Callable[[str], ParsedReply] = parse_reply,
) -> Proposal:
    """One LLM call -> one Proposal (``parse_error`` set when the reply breaks the format).

    ``stage`` tags the call and the proposal (the runner sums spend per stage); ``parse`` reads
    the reply (default: the Name / Thought / Code format of ``harness.methods.reply``).
    ``BudgetExhausted`` and ``LLMError`` propagate: the runner stops the op on them.
    """
    ctx = CallContext(method=method, op=task.op, trial=trial, purpose=operator, stage=stage)
    kw: dict[str, Any] = {"context": ctx}
    if temperature is not None:
        kw["temperature"] = temperature
    if model is not None:
        kw["model"] = model
    res = llm.chat(messages, **kw)
    return proposal_from_reply(res.text, parse, operator=operator, trial=trial, parents=parents,
                               call_ids=[res.call_id] if res.call_id is not None else [],
                               stage=stage)


def proposal_from_reply(
    text: str,
    parse: Callable[[str], ParsedReply] = parse_reply,
    *,
    operator: str,
    trial: int,
    parents: list[Solution] | None = None,
    call_ids: list[int] | None = None,
    stage: str = "",
) -> Proposal:
    """A Proposal from one reply (a parse failure is a Proposal with ``parse_error``)."""
    parsed = parse(text)
    ids = list(call_ids or [])
    parent_ids = [p.candidate_id for p in parents or [] if p.candidate_id is not None]
    if not parsed.ok:
        return Proposal(
            source="",
            operator=operator,
            parent_ids=parent_ids,
            llm_call_ids=ids,
            parse_error=parsed.error,
            stage=stage,
        )
    return Proposal(
        source=parsed.code,
        name=parsed.name or f"{operator}_{trial}",
        thought=parsed.thought,
        operator=operator,
        parent_ids=parent_ids,
        llm_call_ids=ids,
        stage=stage,
    )


def seed_solution(task: TaskContext) -> Solution | None:
    """The op's seed kernel as a population member, or None when the op has none.

    The runner judges the seed before the method starts (in feedback mode, not charged to the
    evaluation budget, as the sources register their baseline without spending a sample) and
    passes it in ``task.extras["seed"]``: {source, name, thought, candidate_id, verdict}."""
    seed = task.extras.get("seed") if task.extras else None
    if not seed:
        return None
    v = seed.get("verdict")
    verdict = Verdict.from_dict(v) if isinstance(v, dict) else v
    p = Proposal(source=seed["source"], name=seed.get("name") or "baseline",
                 thought=seed.get("thought") or "Baseline", operator="seed", stage="seed")
    p.verdict, p.candidate_id = verdict, seed.get("candidate_id")
    return Solution.from_proposal(p, trial=-1)
