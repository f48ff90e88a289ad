"""Stand-in for the LLM layer's recorder (``harness.llm.recording``) while it is absent:
every call goes into the store's ``llm_calls`` table with its request, response, tokens,
latency, error and CallContext, and the ChatResult gets its ``call_id``. The runner uses the
LLM layer's own recorder whenever it is installed."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from harness.llm.base import CallContext, ChatModel, ChatResult
from harness.store.db import Store, utcnow


class LocalRecordingModel:
    def __init__(self, inner: ChatModel, store: Store, run_id: str | None = None):
        self.inner = inner
        self.store = store
        self.run_id = run_id
        self.name = getattr(inner, "name", "model")
        self.offline = getattr(inner, "offline", False)

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def chat(
        self, messages: list[dict[str, str]], *, context: CallContext, **kw: Any
    ) -> ChatResult:
        req = {"messages": messages, **{k: v for k, v in kw.items() if v is not None}}
        req_json = json.dumps(req, sort_keys=True)
        t0 = time.monotonic()
        err: str | None = None
        res: ChatResult | None = None
        try:
            res = self.inner.chat(messages, context=context, **kw)
            return res
        except Exception as e:
            err = f"{type(e).__name__}: {e}"
            raise
        finally:
            with self.store.tx() as c:
                cur = c.execute(
                    "INSERT INTO llm_calls (run_id, method, op, trial, model, request_json, "
                    "request_sha256, response_text, prompt_tokens, completion_tokens, latency_s, "
                    "error, offline, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        context.run_id or self.run_id,
                        context.method,
                        context.op,
                        context.trial,
                        res.model if res else self.name,
                        req_json,
                        hashlib.sha256(req_json.encode()).hexdigest(),
                        res.text if res else None,
                        res.prompt_tokens if res else None,
                        res.completion_tokens if res else None,
                        res.latency_s if res and res.latency_s else time.monotonic() - t0,
                        err,
                        int(bool(res.offline if res else self.offline)),
                        utcnow(),
                    ),
                )
            if res is not None:
                res.call_id = int(cur.lastrowid)
