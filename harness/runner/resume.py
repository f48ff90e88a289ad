"""Resume: answer LLM calls a restarted op already made from the store, not the endpoint.

``ResumedModel`` sits above the recording layer. For a call of (run, op, trial) whose
messages equal a successful call recorded for that same run/op/trial, it returns the
recorded response (with its ``call_id``) without calling the model, and without recording
it again. Repeated identical requests within one trial are answered in recorded order;
once the recording is used up, calls go through to the model (and are recorded as usual).
"""

from __future__ import annotations

import threading

from harness.llm.base import CallContext, ChatModel, ChatRequest, ChatResult, ModelWrapper
from harness.llm.replay import recorded_result
from harness.store.db import Store
from harness.store.llm_calls import LLMCalls


class ResumedModel(ModelWrapper):
    def __init__(self, inner: ChatModel, store: Store, run_id: str):
        super().__init__(inner)
        self.store = store
        self.calls = LLMCalls(store)
        self.run_id = run_id
        self._used: set[int] = set()
        self._lock = threading.Lock()
        self.replayed = 0  # calls answered from the store (for tests and the summary)

    def handle(self, request: ChatRequest) -> ChatResult:
        hit = self._lookup(request.messages, request.context, request.model)
        return hit if hit is not None else request.send(self.inner)

    def _lookup(
        self, messages: list[dict[str, str]], ctx: CallContext, model: str | None
    ) -> ChatResult | None:
        if ctx.op is None or ctx.trial is None:
            return None
        run_id = ctx.run_id or self.run_id
        calls = self.calls.answered(run_id, ctx.op, ctx.trial)
        with self._lock:
            for call in calls:
                if call.call_id in self._used:
                    continue
                req = call.request
                if req is None or req.get("messages") != messages:
                    continue
                if (
                    model is not None
                    and req.get("model") not in (None, model)
                    and call.model != model
                ):
                    continue
                self._used.add(call.call_id)
                self.replayed += 1
                return recorded_result(call, {"resumed_from_call": call.call_id}, call.call_id)
        return None
