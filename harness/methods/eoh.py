"""EoH, Evolution of Heuristics (Liu et al., ICML 2024) adapted to kernels.

Each solution is a one-sentence idea (the reply's Thought) plus code. A population of
``pop_size`` (5) starts with a batch of ``pop_size`` i1 proposals; then each generation applies
the operators e1, e2, m1, m2 in turn, each as a batch of ``pop_size`` proposals (so
5 + 2 x 4 x 5 = 45, the paper budget). As in EoH's own loop, a batch's parents come from the
population as it was when the batch started (drawn by rank with probability proportional to
1/(rank + N), the helper EvoEngineer-Full uses), and after each batch its offspring join and
the population keeps its best valid members, topped up with recent invalid ones while slots
remain (``ElitePopulation``). An operator that needs more parents than the population has
falls back to i1. Budgets under 25 do not reach every operator (the last batch is cut short).
"""

from __future__ import annotations

from collections.abc import Iterator

from harness.llm.base import ChatModel
from harness.methods import prompting
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import Solution, ask, method_rng
from harness.methods.population import ElitePopulation, rank_select

NAME = "eoh"
OPERATORS = ("e1", "e2", "m1", "m2")
PARENTS = {"i1": 0, "e1": 2, "e2": 2, "m1": 1, "m2": 1}


def schedule(evaluations: int, pop_size: int = 5) -> list[tuple[str, int]]:
    """(operator, batch size) for every batch: i1 x pop_size, then e1, e2, m1, m2, e1, ..."""
    batches = [("i1", min(pop_size, evaluations))]
    left, i = evaluations - batches[0][1], 0
    while left > 0:
        n = min(pop_size, left)
        batches.append((OPERATORS[i % len(OPERATORS)], n))
        left, i = left - n, i + 1
    return batches


class EoH:
    name = NAME
    variant = "e1,e2,m1,m2"
    paper = "Liu et al. 2024, Evolution of Heuristics (EoH), ICML"
    default_budget = 45

    def __init__(self, pop_size: int = 5):
        if pop_size < 1:
            raise ValueError("pop_size must be >= 1")
        self.pop_size = pop_size

    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        rng = method_rng(task, NAME)
        pop = ElitePopulation(self.pop_size)
        self.population = pop  # the last op's population, for inspection
        trial = 0
        for batch_op, size in schedule(budget.evaluations, self.pop_size):
            members = pop.members  # parents come from the population at the batch's start
            offspring: list[Solution] = []
            for _ in range(size):
                operator = batch_op if len(members) >= PARENTS[batch_op] else "i1"
                parents = (
                    rank_select(members, PARENTS[operator], rng, population_size=self.pop_size)
                    if PARENTS[operator]
                    else []
                )
                msgs = prompting.messages(task, "eoh/user.j2", operator=operator, parents=parents)
                p = ask(
                    llm,
                    msgs,
                    task=task,
                    method=NAME,
                    trial=trial,
                    operator=operator,
                    parents=parents,
                )
                evaluate(p)
                offspring.append(Solution.from_proposal(p, trial=trial))
                trial += 1
                yield p
            for s in offspring:
                pop.add(s)
