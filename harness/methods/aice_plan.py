"""AI CUDA Engineer's stage budgets: how many evaluations each stage may spend on one op.

Each stage has its own budget (Sakana's pipeline; evotoolkit task/cuda_engineering/
ai_cuda_engineer/ai_cuda_engineer.py): convert and translate retry until they succeed, up to
``convert`` and ``translate`` attempts; evolution runs ``generations`` x ``per_generation``
proposals (10 x 4); the innovation archive stage (RAG) ``rag`` proposals (5); the composition
stage ``compose`` proposals (3) on a fused op with parts. What one stage leaves is not given to
another. The method's default budget is the sum of these (the source's scale): at or above it,
every stage gets its full budget. Under it (an equal-budget comparison, e.g. ``--budget 45``),
each stage's cap is scaled by ``budget / full`` (convert and translate keep at least one
attempt), RAG and compose keep their scaled share in reserve, and evolution gets whatever
convert and translate left.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

CONVERT, TRANSLATE, GENERATIONS, PER_GENERATION, RAG, COMPOSE = 10, 10, 10, 4, 5, 3


@dataclass(frozen=True)
class StagePlan:
    convert: int  # max convert attempts (stop at the first success)
    translate: int  # max translate attempts (stop at the first valid kernel)
    evolve: int  # max evolution proposals
    per_generation: int  # proposals per generation (one per ensemble slot)
    rag: int  # archive-guided proposals
    compose: int  # composition proposals (ops with parts only)
    total: int  # the op's evaluation budget
    scaled: bool  # True when the budget is under the source's scale

    @property
    def reserved(self) -> int:
        """Evaluations kept for the stages after evolution."""
        return self.rag + self.compose

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def full_budget(*, convert: int = CONVERT, translate: int = TRANSLATE, generations: int = GENERATIONS,
                per_generation: int = PER_GENERATION, rag: int = RAG, compose: int = COMPOSE) -> int:
    return convert + translate + generations * per_generation + rag + compose


def plan_budget(
    evaluations: int,
    *,
    has_parts: bool = True,
    convert: int = CONVERT,
    translate: int = TRANSLATE,
    generations: int = GENERATIONS,
    per_generation: int = PER_GENERATION,
    rag: int = RAG,
    compose: int = COMPOSE,
) -> StagePlan:
    """The stage caps for an op with ``evaluations`` (see the module docstring)."""
    per_generation = max(1, per_generation)
    compose = compose if has_parts else 0
    full = convert + translate + generations * per_generation + rag + compose
    if evaluations >= full:
        return StagePlan(convert, translate, generations * per_generation, per_generation, rag,
                         compose, evaluations, scaled=False)
    s = evaluations / full

    def cap(n: int, least: int) -> int:
        return min(n, max(least, round(n * s)))

    conv = cap(convert, 1 if evaluations >= 4 else 0)
    trans = cap(translate, 1)
    rag_n, comp_n = cap(rag, 0), cap(compose, 0)
    evolve = max(0, evaluations - rag_n - comp_n)  # an upper bound: what convert/translate leave
    return StagePlan(conv, trans, evolve, per_generation, rag_n, comp_n, evaluations, scaled=True)
