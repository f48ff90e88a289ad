"""The evaluation endpoint's protocol over a real unix socket: auth, task, evaluate, budget."""

from __future__ import annotations

import os
import tempfile

import pytest

from harness.endpoints.eval_server import EvalEndpoint
from harness.endpoints.uds_http import request
from harness.llm.base import BudgetExhausted
from harness.methods.base import Budget, Proposal, TaskContext
from sandbox.verdict import Status, Verdict

TASK = TaskContext(op="relu", reference_source="class Model: ...", signature="forward(self, x)",
                   device="cpu", hardware="2-core CPU", language="cpp", rules="be correct")


class _Judge:
    """Stands in for the runner's evaluate: numbers proposals, then runs out of budget."""

    def __init__(self, budget: int) -> None:
        self.budget, self.seen = budget, []

    def __call__(self, p: Proposal) -> Verdict:
        if len(self.seen) >= self.budget:
            raise BudgetExhausted("evaluations: 2 of 2 used")
        self.seen.append(p)
        p.candidate_id = len(self.seen)
        ok = "ModelNew" in p.source
        p.verdict = Verdict(status=Status.VALID if ok else Status.COMPILE_ERROR, task="relu")
        return p.verdict


@pytest.fixture
def endpoint():
    judge = _Judge(budget=2)
    got: list[Proposal] = []
    path = os.path.join(tempfile.mkdtemp(prefix="kh-ep-"), "eval.sock")
    ep = EvalEndpoint(path, TASK, judge, Budget(evaluations=2), token="t0k", on_proposal=got.append)
    with ep:
        yield ep, judge, got


def test_requests_without_the_run_token_are_refused(endpoint):
    ep, judge, _ = endpoint
    assert request(ep.socket_path, "GET", "/v1/task/relu")[0] == 401
    assert request(ep.socket_path, "GET", "/v1/task/relu", token="wrong")[0] == 401
    status, body = request(ep.socket_path, "POST", "/v1/evaluate", {"op": "relu", "source": "x"}, token="nope")
    assert status == 401 and body["error"]["type"] == "unauthorized"
    assert judge.seen == []


def test_task_endpoint_shows_the_task_context_and_budget(endpoint):
    ep, _, _ = endpoint
    status, body = request(ep.socket_path, "GET", "/v1/task/relu", token="t0k")
    assert status == 200
    assert body["task"]["op"] == "relu" and body["task"]["language"] == "cpp"
    assert body["budget"]["evaluations"] == 2
    assert request(ep.socket_path, "GET", "/v1/task/matmul", token="t0k")[0] == 404


def test_evaluate_goes_through_the_runner_callable_until_the_budget_is_spent(endpoint):
    ep, judge, got = endpoint
    ok = {"op": "relu", "source": "class ModelNew: pass", "name": "k1", "thought": "vectorise"}
    s1, b1 = request(ep.socket_path, "POST", "/v1/evaluate", ok, token="t0k")
    s2, b2 = request(ep.socket_path, "POST", "/v1/evaluate", {"op": "relu", "source": "oops"}, token="t0k")
    s3, b3 = request(ep.socket_path, "POST", "/v1/evaluate", ok, token="t0k")
    assert (s1, b1["verdict"]["status"], b1["candidate_id"]) == (200, "valid", 1)
    assert (s2, b2["verdict"]["status"]) == (200, "compile_error")
    assert s3 == 429 and b3["error"]["type"] == "budget_exhausted"
    assert [p.name for p in got] == ["k1", ""] and got[0].thought == "vectorise"


def test_malformed_evaluation_requests_get_a_clear_400(endpoint):
    ep, judge, _ = endpoint
    for body in ([1, 2], {"op": "relu"}, {"op": "relu", "source": "x", "verdict": "valid"},
                 {"op": "relu", "source": "x", "parent_ids": ["a"]}):
        status, reply = request(ep.socket_path, "POST", "/v1/evaluate", body, token="t0k")
        assert status == 400, body
        assert reply["error"]["message"]
    assert judge.seen == []
