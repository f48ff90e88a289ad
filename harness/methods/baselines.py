"""Plain baselines: one-shot (a single proposal per op) and best-of-N (N independent
proposals from the same prompt; the runner keeps the fastest valid one, as it does for every
method). N is the evaluation budget, so best-of-N with the paper's 45 is the honest control
every evolutionary method must beat."""

from __future__ import annotations

from collections.abc import Iterator

from harness.llm.base import ChatModel
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import ask
from harness.methods.prompting import messages


class _Sampler:
    name = ""
    variant = ""
    paper = ""
    default_budget = 45
    templates = ("baselines/user.j2",)

    def __init__(self, temperature: float | None = None):
        self.temperature = temperature

    def settings(self, budget: Budget | None = None) -> dict:
        n = self._n(budget) if budget is not None else self.default_budget
        return {"samples": n, "temperature": self.temperature, "seed_kernel": "not used"}

    def _n(self, budget: Budget) -> int:
        return budget.evaluations

    def planned_trials(self, budget: Budget) -> int:
        """How many proposals one op gets (the runner's progress line uses it)."""
        return self._n(budget)

    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        msgs = messages(task, "baselines/user.j2")  # the same prompt for every sample
        for trial in range(self._n(budget)):
            proposal = ask(
                llm,
                msgs,
                task=task,
                method=self.name,
                trial=trial,
                operator="sample",
                temperature=self.temperature,
                stage="sample",
            )
            evaluate(proposal)
            yield proposal


class OneShot(_Sampler):
    name = "one-shot"
    variant = "single proposal"
    paper = "baseline (single LLM proposal per op)"
    default_budget = 1

    def _n(self, budget: Budget) -> int:
        return 1


class BestOfN(_Sampler):
    name = "best-of-n"
    variant = "N independent samples, N = budget"
    paper = "baseline (repeated sampling, keep the fastest valid)"
    default_budget = 45
