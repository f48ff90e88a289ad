"""plan-then-code: an example method plugin (see CONTRIBUTING.md).

Idea: separate *what to change* from *how to write it*. Each trial makes two LLM calls and one
evaluation: (1) plan: show the reference, the current best kernel with its measurement and the
last failure, and ask for a short numbered optimisation plan without code; (2) code: show the
plan and the current best, and ask for a kernel that carries the plan out, in the harness's
reply format. The single best valid kernel is kept (ties: the earlier one).

It uses only the public method contract: ``harness.methods.base`` (Proposal), ``harness.llm.base``
(CallContext) and ``harness.methods.reply`` (the reply format and its parser).
"""

from __future__ import annotations

import re

from harness.llm.base import CallContext
from harness.methods.base import Proposal
from harness.methods.reply import parse_reply

TASK = """Target hardware: {hardware}
Kernel language: {language} (torch.utils.cpp_extension.load_inline)
Rules:
{rules}

Reference PyTorch operator `{op}`:
```python
{reference}
```
"""

PLAN = TASK + """
{best}
{failure}
Do not write code yet. Write a numbered plan of at most {steps} concrete steps that would make a
correct `ModelNew` for this operator faster than the current best (memory access pattern, work per
thread, vectorisation, reductions, launch configuration). One line per step.
"""

CODE = TASK + """
{best}
Plan to carry out:
{plan}

Write the complete `ModelNew` (same constructor and forward signature as `Model`) that carries
out this plan with your own kernel. Reply in exactly this format:

## Name
short_snake_case_name
## Thought
one sentence: what the plan changes and why it is faster
## Code
```python
# the complete Python file defining class ModelNew
```
"""


class PlanThenCode:
    name = "plan-then-code"
    paper = ""
    variant = "plan+code"
    default_budget = 45

    def __init__(self, plan_steps: int = 4):
        self.plan_steps = plan_steps

    def optimize(self, task, llm, evaluate, budget):
        best: Proposal | None = None
        last_failure = ""
        for trial in range(budget.evaluations):
            fields = dict(hardware=task.hardware, language=task.language, rules=task.rules, op=task.op,
                          reference=task.reference_source.rstrip(), best=_show_best(best))
            plan_reply = llm.chat(
                [{"role": "user", "content": PLAN.format(**fields, steps=self.plan_steps,
                                                          failure=last_failure)}],
                context=CallContext(op=task.op, trial=trial, purpose="plan"))
            plan = _plain_plan(plan_reply.text, self.plan_steps)
            code_reply = llm.chat(
                [{"role": "user", "content": CODE.format(**fields, plan=plan)}],
                context=CallContext(op=task.op, trial=trial, purpose="code"))
            parsed = parse_reply(code_reply.text)
            ids = [r.call_id for r in (plan_reply, code_reply) if r.call_id is not None]
            proposal = Proposal(source=parsed.code, name=parsed.name or f"plan_{trial}",
                                thought=(parsed.thought or plan)[:1000], operator="plan+code",
                                parent_ids=[best.candidate_id] if best and best.candidate_id is not None else [],
                                llm_call_ids=ids, parse_error=parsed.error)
            verdict = evaluate(proposal)
            yield proposal
            if verdict.valid and (best is None or _runtime(verdict) < _runtime(best.verdict)):
                best = proposal
            elif not verdict.valid:
                last_failure = f"The last attempt failed ({verdict.status.value}): {verdict.message[:300]}"


def _show_best(best: Proposal | None) -> str:
    if best is None:
        return "No kernel has passed the checks yet: the PyTorch reference is the current best."
    return (f"Current best kernel ({_runtime(best.verdict):.1f} us):\n```python\n"
            f"{best.source.rstrip()}\n```")


def _plain_plan(text: str, steps: int) -> str:
    """The plan as plain numbered lines: code blocks dropped, at most ``steps`` lines kept."""
    text = re.sub(r"```.*?(```|$)", "", text or "", flags=re.S)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return "\n".join(lines[:steps]) or "1. Make the kernel faster while keeping it correct."


def _runtime(verdict) -> float:
    m = verdict.timings.get("candidate") if verdict is not None else None
    return m.median_us if m else float("inf")
