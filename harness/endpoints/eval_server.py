"""The evaluation endpoint a method program talks to (one op, one run, one bearer token).

    GET  /v1/task/{op}      -> {"op", "task": TaskContext, "budget": Budget}
    POST /v1/evaluate       {"op", "source", "name"?, "thought"?, "operator"?, "parent_ids"?}
                            -> {"candidate_id", "verdict": feedback Verdict as JSON}
    GET  /v1/health         -> {"ok": true, "op"}

Every evaluation goes through the runner's ``evaluate`` callable, so the harness's budget,
storage and verdict reuse apply exactly as for an in-process method; a spent budget is HTTP
429 ``budget_exhausted``. Each judged proposal is also handed to ``on_proposal`` so the
harness side can yield it (as the in-process method would have). Protocol: docs/method-protocol.md.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections.abc import Callable
from typing import Any

from harness.endpoints.uds_http import HTTPError, JSONServer
from harness.llm.base import BudgetExhausted
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext

MAX_SOURCE = 512 * 1024
_FIELDS = {"op", "source", "name", "thought", "operator", "parent_ids", "allow_torch_ops"}


class EvalEndpoint:
    """Serves one op's task context and feedback evaluation on a unix socket."""

    def __init__(
        self,
        socket_path: str,
        task: TaskContext,
        evaluate: EvaluateFn,
        budget: Budget,
        token: str | None = None,
        on_proposal: Callable[[Proposal], None] | None = None,
    ) -> None:
        self.task = task
        self.evaluate = evaluate
        self.budget = budget
        self.token = token or secrets.token_urlsafe(32)
        self.on_proposal = on_proposal
        self.evaluations = 0
        self._lock = threading.Lock()
        self.server = JSONServer(
            socket_path,
            {
                "/v1/task": self._task_route,
                "/v1/evaluate": self._evaluate_route,
                "/v1/health": self._health_route,
            },
            self.token,
        )

    @property
    def socket_path(self) -> str:
        return self.server.path

    def start(self) -> EvalEndpoint:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def __enter__(self) -> EvalEndpoint:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- routes ---------------------------------------------------------------------------
    def _health_route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        return 200, {"ok": True, "op": self.task.op}

    def _task_route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if method != "GET":
            raise HTTPError(405, "method_not_allowed", "use GET /v1/task/{op}")
        op = path[len("/v1/task/") :] if path.startswith("/v1/task/") else ""
        self._check_op(op)
        return 200, {
            "op": self.task.op,
            "task": dataclasses.asdict(self.task),
            "budget": dataclasses.asdict(self.budget),
        }

    def _evaluate_route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if method != "POST" or path != "/v1/evaluate":
            raise HTTPError(405, "method_not_allowed", "use POST /v1/evaluate")
        proposal = self._proposal(body)
        try:
            verdict = self.evaluate(proposal)
        except BudgetExhausted as e:
            raise HTTPError(
                429, "budget_exhausted", str(e) or "the evaluation budget is spent"
            ) from e
        with self._lock:
            self.evaluations += 1
        if self.on_proposal is not None:
            self.on_proposal(proposal)
        return 200, {"candidate_id": proposal.candidate_id, "verdict": verdict.to_dict()}

    # -- checks ---------------------------------------------------------------------------
    def _check_op(self, op: str) -> None:
        if op != self.task.op:
            raise HTTPError(
                404, "unknown_op", f"this endpoint serves op {self.task.op!r}, not {op!r}"
            )

    def _proposal(self, body: Any) -> Proposal:
        if not isinstance(body, dict):
            raise HTTPError(400, "bad_request", 'send a JSON object {"op": ..., "source": ...}')
        extra = set(body) - _FIELDS
        if extra:
            raise HTTPError(
                400, "bad_request", f"unknown fields {sorted(extra)}; allowed: {sorted(_FIELDS)}"
            )
        self._check_op(str(body.get("op", "")))
        source = body.get("source")
        if not isinstance(source, str) or not source.strip():
            raise HTTPError(
                400, "bad_request", "'source' must be the candidate's Python source (a string)"
            )
        if len(source) > MAX_SOURCE:
            raise HTTPError(413, "too_large", f"'source' is {len(source)} chars > {MAX_SOURCE}")
        parents = body.get("parent_ids", [])
        if not isinstance(parents, list) or not all(isinstance(p, int) for p in parents):
            raise HTTPError(
                400, "bad_request", "'parent_ids' must be a list of candidate ids (ints)"
            )
        p = Proposal(
            source=source,
            name=str(body.get("name", ""))[:200],
            thought=str(body.get("thought", ""))[:4000],
            operator=str(body.get("operator", ""))[:50],
            parent_ids=parents,
        )
        if body.get("allow_torch_ops"):
            p.allow_torch_ops = True  # type: ignore[attr-defined] - recorded; never the best kernel
        return p
