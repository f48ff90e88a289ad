"""The method-program side of the two endpoints, for programs written in Python.

``EndpointSession.from_env()`` reads what the launcher put in the environment and gives:

* ``task()`` / ``budget()``: GET /v1/task/{op} from the evaluation endpoint;
* ``evaluate(proposal)``: an ``EvaluateFn`` that POSTs /v1/evaluate, fills
  ``proposal.verdict`` / ``candidate_id``, and raises ``BudgetExhausted`` on HTTP 429;
* ``chat_model()``: a ``ChatModel`` on the LLM gateway (OpenAI-compatible, per-run token).

Environment (set by harness/endpoints/launcher.py): HARNESS_EVAL_SOCKET, HARNESS_EVAL_URL,
HARNESS_EVAL_TOKEN, HARNESS_OP, OPENAI_BASE_URL, OPENAI_API_KEY (the gateway token, never
the upstream key), HARNESS_LLM_SOCKET, HARNESS_LLM_MODEL.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from harness.endpoints.uds_http import request
from harness.llm.base import BudgetExhausted, ChatModel
from harness.methods.base import Budget, Proposal, TaskContext
from sandbox.contract import Verdict


class EndpointError(RuntimeError):
    """The evaluation endpoint answered with an error the program cannot fix by retrying."""


@dataclass
class EndpointSession:
    eval_socket: str
    eval_token: str
    op: str
    llm_socket: str | None = None
    llm_token: str | None = None
    llm_model: str = "default"

    @classmethod
    def from_env(cls) -> EndpointSession:
        missing = [
            k
            for k in ("HARNESS_EVAL_SOCKET", "HARNESS_EVAL_TOKEN", "HARNESS_OP")
            if not os.environ.get(k)
        ]
        if missing:
            raise EndpointError(
                f"environment lacks {', '.join(missing)}: start this program "
                "through the harness (harness.endpoints.launcher)"
            )
        return cls(
            eval_socket=os.environ["HARNESS_EVAL_SOCKET"],
            eval_token=os.environ["HARNESS_EVAL_TOKEN"],
            op=os.environ["HARNESS_OP"],
            llm_socket=os.environ.get("HARNESS_LLM_SOCKET"),
            llm_token=os.environ.get("OPENAI_API_KEY"),
            llm_model=os.environ.get("HARNESS_LLM_MODEL", "default"),
        )

    def _get_task(self) -> dict:
        status, body = request(
            self.eval_socket, "GET", f"/v1/task/{self.op}", token=self.eval_token
        )
        if status != 200:
            raise EndpointError(f"GET /v1/task/{self.op}: HTTP {status}: {body}")
        return body

    def task(self) -> TaskContext:
        return TaskContext(**self._get_task()["task"])

    def budget(self) -> Budget:
        return Budget(**self._get_task()["budget"])

    def evaluate(self, proposal: Proposal) -> Verdict:
        body = {
            "op": self.op,
            "source": proposal.source,
            "name": proposal.name,
            "thought": proposal.thought,
            "operator": proposal.operator,
            "parent_ids": list(proposal.parent_ids),
        }
        if getattr(proposal, "allow_torch_ops", False):
            body["allow_torch_ops"] = True
        status, reply = request(
            self.eval_socket, "POST", "/v1/evaluate", body, token=self.eval_token
        )
        if status == 429:
            raise BudgetExhausted(reply.get("error", {}).get("message", "evaluation budget spent"))
        if status != 200:
            raise EndpointError(f"POST /v1/evaluate: HTTP {status}: {reply}")
        verdict = Verdict.from_dict(reply["verdict"])
        proposal.verdict = verdict
        proposal.candidate_id = reply.get("candidate_id")
        return verdict

    def chat_model(self) -> ChatModel:
        """The gateway as a ChatModel (D's OpenAIClient with a ``unix:`` base URL)."""
        from harness.llm.client import OpenAIClient
        from harness.llm.config import LLMConfig

        if not self.llm_socket or not self.llm_token:
            raise EndpointError(
                "no LLM gateway in the environment (HARNESS_LLM_SOCKET, OPENAI_API_KEY)"
            )
        cfg = LLMConfig(
            model=self.llm_model,
            base_url=f"unix:{self.llm_socket}::/v1",
            max_retries=2,
            timeout_s=600.0,
        )
        return OpenAIClient(self.llm_model, cfg, api_key=self.llm_token)
