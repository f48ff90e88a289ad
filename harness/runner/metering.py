"""The per-op budget meter the harness enforces (never the method).

Uses the LLM layer's ``harness.llm.budget`` (``UsageMeter``, ``MeteredModel``) when it is
installed; ``LocalMeter`` / ``LocalMeteredModel`` are a small stand-in with the same contract:
``charge_evaluation()`` and ``charge_call(prompt_tokens, completion_tokens)`` raise
``BudgetExhausted`` once a limit is spent, ``check()`` raises when any limit is spent,
``snapshot()`` returns the usage as a dict.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from harness.llm.base import BudgetExhausted, CallContext, ChatModel, ChatResult
from harness.methods.base import Budget


class LocalMeter:
    def __init__(self, budget: Budget):
        self.budget = budget
        self.evaluations = 0
        self.llm_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def _wall(self) -> float:
        return time.monotonic() - self.started

    def check(self, what: str = "any", extra_tokens: int = 0) -> None:
        b = self.budget
        if self.evaluations >= b.evaluations:
            raise BudgetExhausted(f"evaluation budget spent ({self.evaluations}/{b.evaluations})")
        if b.llm_calls is not None and self.llm_calls >= b.llm_calls:
            raise BudgetExhausted(f"LLM call budget spent ({self.llm_calls}/{b.llm_calls})")
        if b.tokens is not None and self.prompt_tokens + self.completion_tokens >= b.tokens:
            raise BudgetExhausted(
                f"token budget spent ({self.prompt_tokens + self.completion_tokens}/{b.tokens})"
            )
        if b.wall_s is not None and self._wall() >= b.wall_s:
            raise BudgetExhausted(f"wall-time budget spent ({self._wall():.0f}/{b.wall_s:.0f} s)")

    def charge_evaluation(self) -> None:
        with self._lock:
            self.check()
            self.evaluations += 1

    def check_call(self) -> None:
        with self._lock:
            b = self.budget
            if b.llm_calls is not None and self.llm_calls >= b.llm_calls:
                raise BudgetExhausted(f"LLM call budget spent ({self.llm_calls}/{b.llm_calls})")
            if b.tokens is not None and self.prompt_tokens + self.completion_tokens >= b.tokens:
                raise BudgetExhausted("token budget spent")
            if b.wall_s is not None and self._wall() >= b.wall_s:
                raise BudgetExhausted("wall-time budget spent")

    def charge_call(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self.llm_calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens

    def snapshot(self) -> dict[str, Any]:
        return {
            "evaluations": self.evaluations,
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self._wall(), 3),
        }


class LocalMeteredModel:
    """Charges every call to the meter; refuses a call once a limit is spent."""

    def __init__(self, inner: ChatModel, meter: LocalMeter):
        self.inner = inner
        self.meter = meter
        self.name = getattr(inner, "name", "model")
        self.offline = getattr(inner, "offline", False)

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def chat(
        self, messages: list[dict[str, str]], *, context: CallContext, **kw: Any
    ) -> ChatResult:
        self.meter.check_call()
        res = self.inner.chat(messages, context=context, **kw)
        self.meter.charge_call(res.prompt_tokens, res.completion_tokens)
        return res


def make_meter(budget: Budget, prices: dict[str, Any] | None = None) -> Any:
    try:
        from harness.llm.budget import UsageMeter
    except ImportError:
        return LocalMeter(budget)
    return UsageMeter(budget, prices=prices or None)


def metered(model: ChatModel, meter: Any) -> ChatModel:
    if isinstance(meter, LocalMeter):
        return LocalMeteredModel(model, meter)
    from harness.llm.budget import MeteredModel

    return MeteredModel(model, meter)
