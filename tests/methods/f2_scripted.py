"""Recorded-reply LLM and a fake evaluate() for F2's method-logic tests.

``ScriptedLLM`` is a ``ChatModel`` answering from a responder function (the recorded replies of
a scenario) and recording every request; ``FakeEvaluate`` is the method's input boundary: it
reads the verdict a scenario wants from markers in the candidate source
(``RUNTIME=12.5`` -> valid at 12.5 us; ``FAIL:reason`` -> compile_error with that message),
numbers candidates like the store does, and counts evaluations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.llm.base import BudgetExhausted, CallContext, ChatResult
from harness.methods.base import Proposal
from harness.methods.reply import format_reply
from sandbox.verdict import Measurement, Speedup, Status, Verdict

EAGER_US = 100.0


def kernel(runtime: float | None = None, fail: str | None = None, name: str = "k", thought: str = "an idea",
           body: str = "") -> str:
    """A reply in the reply format whose code carries the verdict marker."""
    marker = f"RUNTIME={runtime}" if runtime is not None else f"FAIL:{fail or 'boom'}"
    code = f"import torch\nclass ModelNew(torch.nn.Module):\n    # {marker}\n    {body or 'pass'}\n"
    return format_reply(name, thought, code)


@dataclass
class Call:
    messages: list[dict[str, str]]
    context: CallContext
    model: str | None

    @property
    def prompt(self) -> str:
        return "\n".join(m["content"] for m in self.messages)


@dataclass
class ScriptedLLM:
    responder: object  # (call: Call, index: int) -> str
    name: str = "scripted"
    offline: bool = True
    members: list[str] | None = None
    calls: list[Call] = field(default_factory=list)

    def chat(self, messages, *, context, temperature=None, max_tokens=None, model=None) -> ChatResult:
        call = Call([dict(m) for m in messages], context, model)
        self.calls.append(call)
        text = self.responder(call, len(self.calls) - 1)
        return ChatResult(text=text, model=model or self.name, call_id=len(self.calls), offline=True)

    def by_purpose(self, purpose: str) -> list[Call]:
        return [c for c in self.calls if c.context.purpose == purpose]


@dataclass
class FakeEvaluate:
    limit: int | None = None  # raise BudgetExhausted beyond this many evaluations
    proposals: list[Proposal] = field(default_factory=list)

    def __call__(self, p: Proposal) -> Verdict:
        if self.limit is not None and len(self.proposals) >= self.limit:
            raise BudgetExhausted("evaluations spent")
        self.proposals.append(p)
        p.candidate_id = len(self.proposals)
        m = re.search(r"RUNTIME=([0-9.]+)", p.source or "")
        if p.parse_error:
            v = Verdict(status=Status.COMPILE_ERROR, message=f"reply not parsed: {p.parse_error}")
        elif m:
            rt = float(m.group(1))
            v = Verdict(status=Status.VALID, allow_torch_ops=p.allow_torch_ops,
                        timings={"candidate": Measurement(rt, rt, rt, 10, True),
                                 "eager": Measurement(EAGER_US, EAGER_US, EAGER_US, 10, True)},
                        speedups={"eager": Speedup("eager", EAGER_US / rt, EAGER_US / rt, EAGER_US / rt, 0.01, True)},
                        profile={"kernels": {f"kern_{rt}": 1}})
        else:
            f = re.search(r"FAIL:([^\n]*)", p.source or "")
            v = Verdict(status=Status.COMPILE_ERROR, message=f.group(1) if f else "no marker",
                        logs="error: expected ';' before '}' token")
        p.verdict = v
        return v


def task_context(op: str = "relu", source: str | None = None, seed: int = 0):
    from harness.methods.base import TaskContext
    from harness.methods.prompting import default_rules

    src = source or ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                     "        return torch.relu(x)\n")
    return TaskContext(op=op, reference_source=src, signature="forward(self, x)", device="cpu",
                       hardware="CPU (test)", language="cpp", rules=default_rules("cpu"), seed=seed)


def run_offline_cli(method: str, results, ops: str = "relu", budget: int = 3, timeout: int = 900):
    """``harness run --method METHOD --llm offline --ops OPS --device cpu --budget N`` in a real
    subprocess, with the suite's fast timing caps (tests/support/evalconfig.py); returns (completed process, sqlite3 connection to the results store)."""
    import sqlite3
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    from tests.support.evalconfig import FAST_EVAL_OPTIONS

    cmd = [sys.executable, "-m", "harness", "run", "--method", method, "--llm", "offline", "--ops", ops,
           "--device", "cpu", "--budget", str(budget), "--results", str(results), *FAST_EVAL_OPTIONS]
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=timeout)
    db = Path(results) / "harness.sqlite"
    return proc, (sqlite3.connect(db) if db.is_file() else None)


def assert_offline_run_stored(proc, con, method: str, ops: list[str], budget: int) -> None:
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert con is not None, "no results store written"
    (run_method,), = con.execute("SELECT method FROM runs").fetchall()
    assert run_method == method
    rows = dict(con.execute("SELECT op, status FROM run_ops").fetchall())
    assert rows == {op: "finished" for op in ops}
    for op in ops:
        # trial -1 is the op's seed kernel (judged by the runner, not one of the method's trials)
        (n_cand,), = con.execute("SELECT COUNT(*) FROM candidates WHERE op=? AND trial >= 0", (op,)).fetchall()
        (n_fb,), = con.execute("SELECT COUNT(*) FROM verdicts v JOIN candidates c ON c.candidate_id = "
                               "v.candidate_id WHERE v.op=? AND v.mode='feedback' AND c.trial >= 0", (op,)).fetchall()
        assert n_cand == budget and n_fb == budget
    (offline_calls,), = con.execute("SELECT COUNT(*) FROM llm_calls WHERE offline=1").fetchall()
    assert offline_calls >= budget * len(ops)
