"""The example client printed in docs/method-protocol.md works, run as an isolated program.

The block after ``<!-- example-client -->`` is written to a file and started through
``IsolatedMethod`` (process backend) against the real evaluation endpoint and LLM gateway,
with the offline model behind the gateway. The evaluate callable behind the endpoint is a
small stand-in for the runner's (this test is about the protocol; test_method_programs.py
runs the real runner and evaluator).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from harness.endpoints.launcher import IsolatedMethod, ProgramSettings
from harness.llm.base import BudgetExhausted
from harness.llm.factory import make_model
from harness.methods.base import Budget, Proposal, TaskContext
from sandbox.verdict import Status, Verdict

REPO = Path(__file__).resolve().parents[2]
RELU = (REPO / "reference_ops/activation/relu.py").read_text()


def _example_client() -> str:
    doc = (REPO / "docs/method-protocol.md").read_text()
    m = re.search(r"<!-- example-client -->\s*```python\n(.*?)\n```\n", doc, re.S)
    assert m, "docs/method-protocol.md lost its example client block"
    return m.group(1)


def test_documented_example_client_runs_through_both_endpoints(tmp_path):
    code = _example_client()
    assert len(code.strip().splitlines()) <= 45
    client = tmp_path / "client.py"
    client.write_text(code)
    task = TaskContext(op="relu", reference_source=RELU, signature="forward(self, x)", device="cpu",
                       hardware="a CPU", language="cpp", rules="Keep results correct.")
    seen: list[Proposal] = []

    def evaluate(p: Proposal) -> Verdict:
        if len(seen) == 2:
            raise BudgetExhausted("evaluations: 2 of 2 used")
        seen.append(p)
        p.candidate_id = len(seen)
        ok = "class ModelNew" in p.source
        p.verdict = Verdict(status=Status.VALID if ok else Status.COMPILE_ERROR, task="relu",
                            message="stand-in verdict")
        return p.verdict

    method = IsolatedMethod("example-client", ProgramSettings(argv=[sys.executable, str(client)]))
    llm = make_model("offline", device="cpu")
    yielded = list(method.optimize(task, llm, evaluate, Budget(evaluations=2)))
    assert [p.candidate_id for p in yielded] == [1, 2], method.last_log
    assert all("class ModelNew" in p.source for p in yielded), method.last_log
    assert "0 valid" in method.last_log and "1 valid" in method.last_log
