"""Spend per stage of a method, for the op's usage record.

A proposal's stage is ``Proposal.stage`` (else its operator); an LLM call's is
``CallContext.stage`` (else its purpose). ``StageTally`` counts trials (evaluations) and LLM
calls per stage; ``StageCountingModel`` wraps the op's model so every call the method makes is
counted, including calls that judge nothing (AI CUDA Engineer's error summaries, EoH's
extraction retries). The runner stores ``tally.as_dict()`` under ``usage["stages"]``:
``{"translate": {"trials": 3, "llm_calls": 5}, ...}``.
"""

from __future__ import annotations

import threading
from typing import Any

from harness.llm.base import ChatModel, ChatRequest, ChatResult, ModelWrapper


class StageTally:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stages: dict[str, dict[str, int]] = {}

    def _row(self, stage: str) -> dict[str, int]:
        return self._stages.setdefault(stage or "other", {"trials": 0, "llm_calls": 0})

    def trial(self, stage: str) -> None:
        with self._lock:
            self._row(stage)["trials"] += 1

    def llm_call(self, stage: str) -> None:
        with self._lock:
            self._row(stage)["llm_calls"] += 1

    def as_dict(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {k: dict(v) for k, v in self._stages.items()}


def proposal_stage(proposal: Any) -> str:
    return str(getattr(proposal, "stage", "") or getattr(proposal, "operator", "") or "other")


class StageCountingModel(ModelWrapper):
    """Counts each answered call the method makes under its stage (a call the budget refuses
    or the server fails raises before it is counted)."""

    def __init__(self, inner: ChatModel, tally: StageTally):
        super().__init__(inner)
        self.tally = tally

    def handle(self, request: ChatRequest) -> ChatResult:
        ctx = request.context
        result = request.send(self.inner)
        self.tally.llm_call(ctx.stage or ctx.purpose)
        return result
