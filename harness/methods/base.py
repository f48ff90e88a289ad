"""The method contract: what an optimizer gets and what it gives back.

A method is an object with a ``name`` and ``optimize(task, llm, evaluate, budget)``, a
generator. ``evaluate(proposal)`` is the one channel by which a candidate reaches the harness:
it judges the proposal in feedback mode, stores it as a candidate with its verdict, charges the
budget, and returns the verdict. The method then yields the same proposal: a yield is a step
(the harness may stop the generator there), never a second submission; yielding a proposal
that did not go through ``evaluate`` is a contract error. The harness, not the method, enforces
the budget: ``evaluate`` and ``llm.chat`` raise ``BudgetExhausted`` once it is spent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.llm.base import ChatModel
from sandbox.contract import Verdict


@dataclass(frozen=True)
class Budget:
    evaluations: int = 45  # per op: the EvoEngineer paper's setting
    llm_calls: int | None = None  # per op; None = no separate cap
    tokens: int | None = None  # per op, prompt + completion
    wall_s: float | None = None  # per op

    def __post_init__(self) -> None:
        if self.evaluations < 1:
            raise ValueError("budget.evaluations must be >= 1")


@dataclass(frozen=True)
class TaskContext:
    """What a method sees of an op (I1 task context in EvoEngineer's terms)."""

    op: str
    reference_source: str
    signature: str  # forward signature, e.g. "forward(self, A: Tensor, B: Tensor) -> Tensor"
    device: str  # "cuda" | "cpu"
    hardware: str  # target hardware and toolchain, in words, for prompts
    language: str  # "cuda" (load_inline CUDA) | "cpp" (load_inline C++ on CPU)
    rules: str  # the evaluation rules in words, for prompts
    seed: int = 0
    extras: dict[str, Any] = field(default_factory=dict)  # e.g. seed kernel source


@dataclass
class Proposal:
    """One candidate a method proposes, with what produced it."""

    source: str  # ModelNew source ("" when the reply could not be parsed)
    name: str = ""
    thought: str = ""  # the rationale / insight (EvoEngineer I3)
    operator: str = ""  # init | mutation | crossover | e1 | ...
    parent_ids: list[int] = field(default_factory=list)  # candidate ids
    llm_call_ids: list[int] = field(default_factory=list)
    parse_error: str | None = None
    # True: judge with EvalConfig(allow_torch_ops=True) (AI CUDA Engineer's convert stage checks a
    # functional-PyTorch rewrite). Such a proposal still counts against the budget but is never
    # an op's best kernel (the verdict records allow_torch_ops=True).
    allow_torch_ops: bool = False
    verdict: Verdict | None = None  # filled by evaluate()
    candidate_id: int | None = None  # filled by the harness when stored
    # the method's stage that produced it (AI CUDA Engineer: convert, translate, evolve, rag,
    # compose; EvoEngineer: init, evolve ...); "" = the operator. The runner sums trials per stage.
    stage: str = ""


# evaluate(proposal) judges the proposal in feedback mode, stores it, fills
# proposal.verdict and proposal.candidate_id, and returns the verdict.
EvaluateFn = Callable[[Proposal], Verdict]


class Method(Protocol):
    name: str
    paper: str
    variant: str

    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]: ...
