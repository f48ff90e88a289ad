"""The LLM interface every method talks to: OpenAI chat messages in, text and usage out.

Implementations: ``harness.llm.client.OpenAIClient`` (any OpenAI-compatible endpoint),
``harness.llm.offline.OfflineModel`` (deterministic, keyless), ``harness.llm.replay``
(answers from a recorded run). All record every call to the store through the same
``CallContext`` so a run can be replayed and audited.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class CallContext:
    """Where a call belongs: recorded with it."""

    run_id: str | None = None
    method: str | None = None
    op: str | None = None
    trial: int | None = None
    purpose: str = ""  # e.g. "mutation", "translate", "summarize-error"
    stage: str = ""  # the method's stage (convert, translate, evolve...); "" = the purpose


@dataclass
class ChatResult:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    call_id: int | None = None  # row id in llm_calls, once recorded
    offline: bool = False
    raw: dict[str, Any] = field(default_factory=dict)


class LLMError(RuntimeError):
    """A call failed in a way retrying will not fix (bad key, unknown model, too long)."""


class TransientError(LLMError):
    """Still failing after every retry (rate limit, server error, timeout, connection refused, bad
    response): the endpoint is not answering; the run stops, resumable (harness/runner/stop.py)."""


class BudgetExhausted(RuntimeError):
    """The harness-enforced budget (calls, tokens, evaluations, wall time) is spent."""


class ChatModel(Protocol):
    name: str  # e.g. "offline", "openai:gpt-4.1"
    offline: bool

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        context: CallContext,
        temperature: float | None = None,
        max_tokens: int | None = None,
        model: str | None = None,  # pick one model of an ensemble; None = default
    ) -> ChatResult: ...


@dataclass(frozen=True)
class ChatRequest:
    """One ``chat`` call's arguments, as a wrapper sees them."""

    messages: list[dict[str, str]]
    context: CallContext
    temperature: float | None = None
    max_tokens: int | None = None
    model: str | None = None

    def send(self, to: ChatModel) -> ChatResult:
        return to.chat(self.messages, context=self.context, temperature=self.temperature,
                       max_tokens=self.max_tokens, model=self.model)


class ModelWrapper:
    """A ``ChatModel`` around another (recording, metering): the ``chat`` signature is written
    once here; a wrapper overrides ``handle(request)`` and passes the call on with
    ``request.send(self.inner)``. ``name``, ``offline`` and every other attribute (``base_url``,
    ``members``, ``pick``...) come from the wrapped model."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.offline = inner.offline

    def __getattr__(self, item: str) -> Any:
        if item == "inner":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(item)
        return getattr(self.inner, item)

    # the ChatModel.chat signature, repeated on purpose: the one place wrappers write it
    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        context: CallContext,
        temperature: float | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> ChatResult:
        return self.handle(ChatRequest(messages, context, temperature, max_tokens, model))

    def handle(self, request: ChatRequest) -> ChatResult:
        return request.send(self.inner)
