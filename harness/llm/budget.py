"""The harness-enforced budget: a usage meter per (run, method, op), and the wrappers that
charge it.

The method never holds the meter. The harness gives it ``MeteredModel(llm, meter)`` and an
``evaluate`` wrapped by ``guarded_evaluate``; both raise ``BudgetExhausted`` *before* work
that the budget no longer covers, which ends the method's search cleanly. ``snapshot()``
is the usage record stored per op (``run_ops.usage_json``), with cost when a price table
for the model is configured.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from harness.llm.base import BudgetExhausted, ChatModel, ChatRequest, ChatResult, ModelWrapper
from harness.llm.config import Price
from harness.methods.base import Budget

T = TypeVar("T")


class UsageMeter:
    """Counts evaluations, LLM calls, tokens, wall time (and cost) against a ``Budget``."""

    def __init__(
        self,
        budget: Budget,
        prices: Mapping[str, Price] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.budget = budget
        self.prices = dict(prices or {})
        self._clock = clock
        self._t0 = clock()
        self._elapsed_before = 0.0  # wall time spent before a resume
        self._lock = threading.Lock()
        self.evaluations = 0
        self.llm_calls = 0
        self.failed_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.token_estimates = False  # some counts came from the offline model's estimate
        self.cost_usd = 0.0
        self.unpriced_models: set[str] = set()
        self.exhausted: str | None = None

    # -- accounting ----------------------------------------------------------------------
    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def wall_s(self) -> float:
        return self._elapsed_before + self._clock() - self._t0

    def charge_call(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        *,
        model: str | None = None,
        estimate: bool = False,
        failed: bool = False,
    ) -> None:
        with self._lock:
            self.llm_calls += 1
            self.failed_calls += int(failed)
            self.prompt_tokens += int(prompt_tokens or 0)
            self.completion_tokens += int(completion_tokens or 0)
            self.token_estimates |= estimate
            if model is not None and not failed:
                price = self._price(model)
                if price is None:
                    self.unpriced_models.add(model)
                else:
                    self.cost_usd += price.cost(prompt_tokens or 0, completion_tokens or 0)

    def charge_evaluation(self) -> None:
        with self._lock:
            self.evaluations += 1

    # -- enforcement ---------------------------------------------------------------------
    def spent(self, what: str = "any", extra_tokens: int = 0) -> str | None:
        """Why the budget no longer covers ``what`` ("llm", "evaluation", "any"), or None."""
        b = self.budget
        if b.wall_s is not None and self.wall_s >= b.wall_s:
            return f"wall time spent ({self.wall_s:.0f} s of {b.wall_s:g} s)"
        if self.evaluations >= b.evaluations:
            return f"evaluations spent ({self.evaluations} of {b.evaluations})"
        if what in ("llm", "any"):
            if b.llm_calls is not None and self.llm_calls >= b.llm_calls:
                return f"LLM calls spent ({self.llm_calls} of {b.llm_calls})"
            if b.tokens is not None and (
                self.tokens >= b.tokens or self.tokens + extra_tokens > b.tokens
            ):
                return (
                    f"tokens spent ({self.tokens} used, {extra_tokens} more asked, of {b.tokens})"
                )
        return None

    def check(self, what: str = "any", extra_tokens: int = 0) -> None:
        """Raise ``BudgetExhausted`` when the budget no longer covers ``what``."""
        reason = self.spent(what, extra_tokens)
        if reason is not None:
            self.exhausted = self.exhausted or reason
            raise BudgetExhausted(f"budget exhausted: {reason}")

    # -- reporting -----------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            snap: dict[str, Any] = {
                "evaluations": self.evaluations,
                "llm_calls": self.llm_calls,
                "failed_llm_calls": self.failed_calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "tokens": self.tokens,
                "tokens_are_estimates": self.token_estimates,
                "wall_s": round(self.wall_s, 3),
                "limits": {
                    "evaluations": self.budget.evaluations,
                    "llm_calls": self.budget.llm_calls,
                    "tokens": self.budget.tokens,
                    "wall_s": self.budget.wall_s,
                },
                "exhausted": self.exhausted,
            }
            if self.prices:
                snap["cost_usd"] = None if self.unpriced_models else round(self.cost_usd, 6)
                snap["unpriced_models"] = sorted(self.unpriced_models)
            return snap

    @classmethod
    def resume(
        cls, budget: Budget, snapshot: Mapping[str, Any], prices: Mapping[str, Price] | None = None
    ) -> UsageMeter:
        """A meter that continues from a stored snapshot (a resumed run spends no budget twice)."""
        m = cls(budget, prices)
        m.evaluations = int(snapshot.get("evaluations", 0))
        m.llm_calls = int(snapshot.get("llm_calls", 0))
        m.failed_calls = int(snapshot.get("failed_llm_calls", 0))
        m.prompt_tokens = int(snapshot.get("prompt_tokens", 0))
        m.completion_tokens = int(snapshot.get("completion_tokens", 0))
        m.token_estimates = bool(snapshot.get("tokens_are_estimates", False))
        m._elapsed_before = float(snapshot.get("wall_s", 0.0))
        m.cost_usd = float(snapshot.get("cost_usd") or 0.0)
        return m

    def _price(self, model: str) -> Price | None:
        if model in self.prices:
            return self.prices[model]
        return self.prices.get(model.split(":", 1)[-1])


class MeteredModel(ModelWrapper):
    """A ``ChatModel`` that refuses calls the budget does not cover and charges the rest."""

    def __init__(self, inner: ChatModel, meter: UsageMeter):
        super().__init__(inner)
        self.meter = meter

    def handle(self, req: ChatRequest) -> ChatResult:
        prompt_estimate = sum(len(str(m.get("content", ""))) for m in req.messages) // 4
        self.meter.check("llm", extra_tokens=prompt_estimate)
        try:
            result = req.send(self.inner)
        except BudgetExhausted:
            raise
        except Exception:
            self.meter.charge_call(0, 0, model=req.model, failed=True)
            raise
        self.meter.charge_call(
            result.prompt_tokens,
            result.completion_tokens,
            model=result.model,
            estimate=result.offline or bool(result.raw.get("token_estimate")),
        )
        return result


def guarded_evaluate(evaluate: Callable[[T], Any], meter: UsageMeter) -> Callable[[T], Any]:
    """Wrap the harness's ``evaluate(proposal)``: refuse once evaluations are spent, charge each."""

    def run(proposal: T) -> Any:
        meter.check("evaluation")
        meter.charge_evaluation()
        return evaluate(proposal)

    return run
