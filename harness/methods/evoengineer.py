"""EvoEngineer (arXiv 2510.03760): one implementation, three variants chosen by switches.

Information types in the prompt:
  I1 task context (always): reference source, current best kernel, target and toolchain, rules.
  I2 historical solutions (Full): parent kernels with their measured runtimes.
  I3 insights (Insight, Full): thoughts stored with earlier valid solutions, <= 3 sampled.

Population management:
  Free, Insight: a single best solution; every trial asks to improve the current best.
  Full: a population of 5 with elite preservation (``ElitePopulation``); operators init (no
  parents) until 2 valid members exist, then mutation (1 parent) and crossover (2 parents)
  alternate; parents are drawn by rank with p ~ 1/(rank + N).

The seed: before any valid kernel, the PyTorch reference is the current best; its runtime is
the eager time from the first feedback verdict that measured one. A reply that breaks the
Name/Thought/Code format is still passed to ``evaluate`` (it becomes a failed trial that
counts against the budget).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from harness.llm.base import ChatModel
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import Solution, ask, eager_runtime, method_rng
from harness.methods.population import ElitePopulation, rank_select, sample_insights
from harness.methods.prompting import messages

PAPER = "EvoEngineer: Mastering Automated CUDA Kernel Code Evolution with LLMs (arXiv 2510.03760)"


@dataclass(frozen=True)
class Switches:
    i2_history: bool  # parents with runtimes in the prompt
    i3_insights: bool  # sampled insights in the prompt
    show_best_measurement: bool  # best kernel's runtime + profile summary
    population_size: int  # 1 = single best


VARIANTS = {
    "free": Switches(
        i2_history=False, i3_insights=False, show_best_measurement=False, population_size=1
    ),
    "insight": Switches(
        i2_history=False, i3_insights=True, show_best_measurement=True, population_size=1
    ),
    "full": Switches(
        i2_history=True, i3_insights=True, show_best_measurement=True, population_size=5
    ),
}


class EvoEngineer:
    paper = PAPER
    default_budget = 45

    def __init__(
        self,
        variant: str = "full",
        population_size: int | None = None,
        max_insights: int = 3,
        temperature: float | None = None,
    ):
        if variant not in VARIANTS:
            raise ValueError(f"EvoEngineer variant {variant!r}: use one of {sorted(VARIANTS)}")
        self.variant = variant
        self.name = f"evoengineer-{variant}"
        sw = VARIANTS[variant]
        if population_size is not None and variant != "full" and population_size != 1:
            raise ValueError(f"{self.name} keeps a single best solution; population_size must be 1")
        self.switches = Switches(
            sw.i2_history,
            sw.i3_insights,
            sw.show_best_measurement,
            population_size or sw.population_size,
        )
        self.max_insights = max_insights
        self.temperature = temperature
        # on_step(trial, snapshot): called after each judged proposal with the population's
        # candidate ids, the best id and the insight pool (for tests and debugging)
        self.on_step: Callable[[int, dict], None] | None = None

    # -- the search loop ------------------------------------------------------------------
    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        sw = self.switches
        rng = method_rng(task, self.name)
        pop = ElitePopulation(sw.population_size)
        insight_pool: list[str] = []
        seed_runtime: float | None = None
        steps_after_init = 0
        for trial in range(budget.evaluations):
            operator, parents = self.choose_operator(pop, steps_after_init, rng)
            if operator in ("mutation", "crossover"):
                steps_after_init += 1
            insights = (
                sample_insights(insight_pool, self.max_insights, rng) if sw.i3_insights else []
            )
            msgs = messages(
                task,
                "evoengineer/user.j2",
                operator=operator,
                best=pop.best,
                parents=parents if sw.i2_history else [],
                insights=insights,
                show_best_measurement=sw.show_best_measurement,
                seed_runtime_us=seed_runtime,
            )
            lineage = parents if sw.i2_history else ([pop.best] if pop.best else [])
            proposal = ask(
                llm,
                msgs,
                task=task,
                method=self.name,
                trial=trial,
                operator=operator,
                parents=lineage,
                temperature=self.temperature,
            )
            evaluate(proposal)
            yield proposal
            sol = Solution.from_proposal(proposal, trial)
            if seed_runtime is None:
                seed_runtime = eager_runtime(proposal.verdict)
            if not proposal.parse_error:
                pop.add(sol)
            if sol.valid and sol.thought:
                insight_pool.append(sol.thought)
            if self.on_step is not None:
                self.on_step(
                    trial,
                    {
                        "operator": operator,
                        "parents": [p.candidate_id for p in parents],
                        "members": [m.candidate_id for m in pop.members],
                        "valid": [m.candidate_id for m in pop.valid],
                        "best": pop.best.candidate_id if pop.best else None,
                        "insights_shown": insights,
                        "insight_pool": list(insight_pool),
                    },
                )

    def choose_operator(
        self, pop: ElitePopulation, steps_after_init: int, rng: random.Random
    ) -> tuple[str, list[Solution]]:
        """Free/Insight: ``improve`` the best. Full: init until 2 valid, then alternate."""
        if self.switches.population_size == 1 or not self.switches.i2_history:
            return "improve", ([pop.best] if pop.best else [])
        if len(pop.valid) < 2:
            return "init", []
        if steps_after_init % 2 == 0:
            return "mutation", rank_select(pop.members, 1, rng, self.switches.population_size)
        return "crossover", rank_select(pop.members, 2, rng, self.switches.population_size)


class EvoEngineerFree(EvoEngineer):
    variant = "free"

    def __init__(self, **kw):
        super().__init__(variant="free", **kw)


class EvoEngineerInsight(EvoEngineer):
    variant = "insight"

    def __init__(self, **kw):
        super().__init__(variant="insight", **kw)


class EvoEngineerFull(EvoEngineer):
    variant = "full"

    def __init__(self, **kw):
        super().__init__(variant="full", **kw)
