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
