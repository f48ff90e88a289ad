"""Recorded LLM calls: the one module that writes and reads the ``llm_calls`` table.

The LLM layer records every call here (``harness.llm.recording``), answers a replay from a
recorded run (``harness.llm.replay``), and a resumed op takes back the calls it already made
(``harness.runner.resume``); ``Results.llm_usage`` sums them per op.

    calls = LLMCalls(store)
    cid = calls.record(run_id="r", method="best-of-n", op="relu", trial=0, model="m", ...)
    calls.of_run("r")                 # every call of a run, in recorded order (replay)
    calls.answered("r", "relu", 0)    # successful calls of one trial (resume)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.store.db import Store, utcnow


@dataclass(frozen=True)
class LLMCall:
    """One recorded call: the canonical request, the response, tokens, latency, error."""

    call_id: int
    run_id: str | None
    method: str | None
    op: str | None
    trial: int | None
    model: str
    base_url: str | None
    request_json: str  # canonical request + context (never an API key)
    request_sha256: str  # the replay key
    response_text: str | None
    response_json: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    error: str | None
    offline: bool
    created_at: str

    @classmethod
    def from_row(cls, r: Any) -> LLMCall:
        return cls(**{k: r[k] for k in r.keys() if k in _FIELDS}, offline=bool(r["offline"]))

    @property
    def request(self) -> dict[str, Any] | None:
        """The stored request as a dict; None when it cannot be read back."""
        try:
            req = json.loads(self.request_json)
        except ValueError:
            return None
        return req if isinstance(req, dict) else None

    @property
    def response_raw(self) -> dict[str, Any]:
        """The provider's extra response fields recorded with the call ({} when none)."""
        if not self.response_json:
            return {}
        try:
            return dict(json.loads(self.response_json).get("raw") or {})
        except (ValueError, AttributeError, TypeError):
            return {}


_FIELDS = {
    "call_id", "run_id", "method", "op", "trial", "model", "base_url", "request_json",
    "request_sha256", "response_text", "response_json", "prompt_tokens", "completion_tokens",
    "latency_s", "error", "created_at",
}  # fmt: skip


class LLMCalls:
    """The recorded LLM calls of one results store."""

    def __init__(self, store: Store):
        self.store = store

    def record(
        self,
        *,
        run_id: str | None,
        method: str | None,
        op: str | None,
        trial: int | None,
        model: str,
        base_url: str | None,
        request: dict[str, Any],
        request_sha256: str,
        response_text: str | None,
        response: dict[str, Any] | None,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        latency_s: float,
        error: str | None,
        offline: bool,
    ) -> int:
        """Store one call (made or failed); returns its call id."""
        response_json = (
            None if response is None else json.dumps(response, default=str, ensure_ascii=False)
        )
        with self.store.tx() as c:
            cur = c.execute(
                "INSERT INTO llm_calls (run_id, method, op, trial, model, base_url, request_json, "
                "request_sha256, response_text, response_json, prompt_tokens, completion_tokens, "
                "latency_s, error, offline, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    run_id,
                    method,
                    op,
                    trial,
                    model,
                    base_url,
                    json.dumps(request, ensure_ascii=False),
                    request_sha256,
                    response_text,
                    response_json,
                    prompt_tokens,
                    completion_tokens,
                    latency_s,
                    error,
                    int(bool(offline)),
                    utcnow(),
                ),
            )
            return int(cur.lastrowid)

    def of_run(self, run_id: str) -> list[LLMCall]:
        """Every call recorded for a run (failed ones too), in recorded order."""
        rows = self.store.query(
            "SELECT * FROM llm_calls WHERE run_id=? ORDER BY call_id", (run_id,)
        )
        return [LLMCall.from_row(r) for r in rows]

    def answered(self, run_id: str, op: str, trial: int) -> list[LLMCall]:
        """The successful calls (a response, no error) of one trial of a run's op, in order."""
        rows = self.store.query(
            "SELECT * FROM llm_calls WHERE run_id=? AND op=? AND trial=? AND error IS NULL "
            "AND response_text IS NOT NULL ORDER BY call_id",
            (run_id, op, trial),
        )
        return [LLMCall.from_row(r) for r in rows]

    def all_offline(self, run_id: str) -> bool:
        """Whether the run recorded calls and every one was answered by an offline model."""
        row = self.store.query(
            "SELECT COUNT(*) AS n, COALESCE(SUM(offline), 0) AS off FROM llm_calls WHERE run_id=?",
            (run_id,),
        )[0]
        return row["n"] > 0 and row["n"] == row["off"]

    def usage_by_op(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Per op: number of LLM calls, prompt/completion tokens, latency, errors."""
        rows = self.store.query(
            "SELECT op, COUNT(*) AS calls, COALESCE(SUM(prompt_tokens),0) AS prompt_tokens, "
            "COALESCE(SUM(completion_tokens),0) AS completion_tokens, COALESCE(SUM(latency_s),0) "
            "AS latency_s, SUM(error IS NOT NULL) AS errors FROM llm_calls WHERE run_id=? GROUP BY op",
            (run_id,),
        )
        return {r["op"] or "": {k: r[k] for k in r.keys() if k != "op"} for r in rows}
