"""Record every LLM call in the results store, so runs can be audited and replayed.

``RecordingModel`` wraps any ``ChatModel``: each call is recorded through the store's
``LLMCalls`` (request, response, tokens, latency, error, and the ``CallContext``: run,
method, op, trial, purpose) and ``ChatResult.call_id`` is set to its call id. The request is stored in a
canonical form (roles and contents, sampling parameters, the ensemble member asked for)
whose sha256 is the replay key; API keys are never part of it. The wrapper's ``run_id``
(set by the harness) wins over ``CallContext.run_id`` (set by the method), which is used
only when the wrapper has none.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import TYPE_CHECKING, Any

from harness.llm.base import (
    BudgetExhausted,
    CallContext,
    ChatModel,
    ChatRequest,
    ChatResult,
    ModelWrapper,
)
from harness.store.llm_calls import LLMCalls

if TYPE_CHECKING:
    from harness.store.db import Store


def canonical_request(
    messages: list[dict[str, str]],
    temperature: float | None,
    max_tokens: int | None,
    model: str | None,
) -> dict[str, Any]:
    """What identifies a request for replay: exactly what the method asked for."""
    return {
        "messages": [
            {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))}
            for m in messages
        ],
        "temperature": temperature,
        "max_tokens": max_tokens,
        "model": model,
    }


def request_sha256(request: dict[str, Any]) -> str:
    blob = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class RecordingModel(ModelWrapper):
    """A ``ChatModel`` that records each call of ``inner`` into ``store``."""

    def __init__(
        self,
        inner: ChatModel,
        store: Store,
        *,
        run_id: str | None = None,
        base_url: str | None = None,
    ):
        super().__init__(inner)
        self.store = store
        self.calls = LLMCalls(store)
        self.run_id = run_id
        self.base_url = base_url

    def handle(self, req: ChatRequest) -> ChatResult:
        context, model = req.context, req.model
        request = canonical_request(req.messages, req.temperature, req.max_tokens, model)
        t0 = time.perf_counter()
        try:
            result = req.send(self.inner)
        except BudgetExhausted:
            raise  # no call was made
        except Exception as e:
            self._write(
                request, context, None, f"{type(e).__name__}: {e}", time.perf_counter() - t0, model
            )
            raise
        result.call_id = self._write(request, context, result, None, result.latency_s, model)
        return result

    def _write(
        self,
        request: dict[str, Any],
        ctx: CallContext,
        result: ChatResult | None,
        error: str | None,
        latency_s: float,
        asked: str | None,
    ) -> int:
        stored = dict(request, context={"purpose": ctx.purpose, "stage": ctx.stage or ctx.purpose,
                                        "llm": self.name})
        response = None
        if result is not None:
            response = {"model": result.model, "offline": result.offline, "raw": result.raw}
        return self.calls.record(
            run_id=self.run_id or ctx.run_id,
            method=ctx.method,
            op=ctx.op,
            trial=ctx.trial,
            model=result.model if result is not None else (asked or self.name),
            base_url=getattr(self.inner, "base_url", None) or self.base_url,
            request=stored,
            request_sha256=request_sha256(request),
            response_text=result.text if result is not None else None,
            response=response,
            prompt_tokens=result.prompt_tokens if result is not None else None,
            completion_tokens=result.completion_tokens if result is not None else None,
            latency_s=latency_s,
            error=error,
            offline=result.offline if result is not None else self.offline,
        )
