"""Answer LLM requests from a recorded run (``--llm replay:RUN_ID``): no API, same candidates.

A request is matched by the sha256 of its canonical form (see ``harness.llm.recording``).
Identical requests are answered in the order they were recorded; a request the recording
does not hold is an ``LLMError`` that says so (the method or its prompts changed).
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from typing import TYPE_CHECKING, Any

from harness.llm.base import CallContext, ChatResult, LLMError
from harness.llm.recording import canonical_request, request_sha256
from harness.store.llm_calls import LLMCall, LLMCalls

if TYPE_CHECKING:
    from harness.store.db import Store


class ReplayError(LLMError):
    """The recorded run cannot answer this request."""


def recorded_result(call: LLMCall, raw: dict[str, Any], call_id: int | None = None) -> ChatResult:
    """A recorded call's response answered again, taking no time: replay (here) and resume
    (``harness/runner/resume.py``)."""
    return ChatResult(
        text=call.response_text or "",
        model=call.model,
        prompt_tokens=call.prompt_tokens or 0,
        completion_tokens=call.completion_tokens or 0,
        latency_s=0.0,
        call_id=call_id,
        offline=call.offline,
        raw=raw,
    )


class ReplayModel:
    def __init__(self, store: Store, run_id: str):
        self.run_id = run_id
        self.name = f"replay:{run_id}"
        calls = LLMCalls(store).of_run(run_id)
        if not calls:
            raise ReplayError(
                f"replay:{run_id}: the store {store.path} holds no LLM calls of run {run_id!r}; "
                "list recorded runs with `harness runs list` and pass the same --results directory"
            )
        self._queues: dict[str, deque[LLMCall]] = defaultdict(deque)
        for call in calls:
            self._queues[call.request_sha256].append(call)
        self.recorded = len(calls)
        self.offline = all(c.offline for c in calls)
        models = sorted({c.model for c in calls})
        self.model = models[0] if len(models) == 1 else ",".join(models)
        self._lock = threading.Lock()

    def remaining(self) -> int:
        with self._lock:
            return sum(len(q) for q in self._queues.values())

    # the ChatModel.chat signature (harness/llm/base.py), repeated on purpose: a backend
    # implements the protocol; wrappers write it once (ModelWrapper)
    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        context: CallContext,
        temperature: float | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> ChatResult:
        sha = request_sha256(canonical_request(messages, temperature, max_tokens, model))
        with self._lock:
            q = self._queues.get(sha)
            row = q.popleft() if q else None
        if row is None:
            last = str(messages[-1].get("content", ""))[:160].replace("\n", " ") if messages else ""
            raise ReplayError(
                f"replay:{self.run_id}: request {sha[:12]} (op={context.op}, trial={context.trial}, "
                f"purpose={context.purpose!r}) is not in the recording, or was asked more often than "
                f"recorded; the method, its prompts or its settings differ from the recorded run. "
                f"Last message begins: {last!r}. Re-run with a live model instead of replay."
            )
        if row.error:
            raise ReplayError(
                f"replay:{self.run_id}: the recorded call {row.call_id} failed: {row.error}"
            )
        raw: dict[str, Any] = row.response_raw
        raw["replayed_call_id"] = row.call_id
        raw["recorded_latency_s"] = row.latency_s
        return recorded_result(row, raw)
