"""The per-op budget meter the harness enforces (never the method): thin glue over the LLM
layer's ``harness.llm.budget`` (``UsageMeter`` counts evaluations, calls, tokens and wall time;
``MeteredModel`` charges every LLM call and refuses one once a limit is spent)."""

from __future__ import annotations

from typing import Any

from harness.llm.base import ChatModel
from harness.llm.budget import MeteredModel, UsageMeter
from harness.methods.base import Budget


def make_meter(budget: Budget, prices: dict[str, Any] | None = None) -> UsageMeter:
    return UsageMeter(budget, prices=prices or None)


def metered(model: ChatModel, meter: UsageMeter) -> ChatModel:
    return MeteredModel(model, meter)
