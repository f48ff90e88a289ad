"""EvoEngineer (arXiv 2510.03760), as the authors' code runs it (evotoolkit: evo_method/evoengineer/
evoengineer.py, task/cuda_engineering/method_interface/evoengineer_*_interface.py).

One implementation, three variants:

* **Free**: every prompt shows the task and the current best kernel's code only; the reply is code.
* **Insight**: every prompt (operator ``init``) shows the current best with its runtime, its
  approach (the thought stored with it) and profile, and up to 3 insights sampled from the
  current population's thoughts.
* **Full**: ``init`` as Insight until the population holds 2 valid solutions; then each
  generation runs ``crossover`` (2 parents) and ``mutation`` (1 parent) prompts that add the
  parents with their runtimes and approaches.

Population: the op's seed kernel (``task.extras["seed"]``, judged by the runner, not charged)
is the first member and the first current best; without one, the PyTorch reference is shown as
the baseline. Proposals come in generations of ``samplers`` (4): every prompt of a generation
sees the population as it stood when the generation began; after it, the population keeps the
``population_size`` (5) fastest valid solutions, topped up with the most recent invalid ones.
Parents are drawn from the *valid* members only, with replacement, weight ``1 / (i + n)`` for
the i-th fastest of n (i from 0). A reply that breaks the format is still evaluated (a failed
trial that counts).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from harness.llm.base import ChatModel
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import Solution, ask, eager_runtime, method_rng, seed_solution
from harness.methods.population import ElitePopulation, by_fitness, rank_choices
from harness.methods.prompting import messages

PAPER = "EvoEngineer: Mastering Automated CUDA Kernel Code Evolution with LLMs (arXiv 2510.03760)"
VARIANTS = ("free", "insight", "full")
PROTOCOLS = ("paper",)
TEMPLATES = {
    "free": ("evoengineer/free.j2",),
    "insight": ("evoengineer/init.j2",),
    "full": ("evoengineer/init.j2", "evoengineer/crossover.j2", "evoengineer/mutation.j2"),
}
PARENTS = {"init": 0, "mutation": 1, "crossover": 2}


def check_protocol(protocol: str, name: str) -> str:
    if protocol not in PROTOCOLS:
        raise ValueError(f"{name}: protocol={protocol!r}: use one of {list(PROTOCOLS)} "
                         "(each method runs as its source describes; docs/methods.md lists what differs)")
    return protocol


class EvoEngineer:
    paper = PAPER
    default_budget = 45  # the paper's and evotoolkit's max_sample_nums
    uses_seed_kernel = True

    def __init__(
        self,
        variant: str = "full",
        population_size: int = 5,
        max_insights: int = 3,
        samplers: int = 4,
        valid_required: int | None = None,
        max_generations: int | None = None,
        temperature: float | None = None,
        protocol: str = "paper",
    ):
        if variant not in VARIANTS:
            raise ValueError(f"EvoEngineer variant {variant!r}: use one of {sorted(VARIANTS)}")
        if population_size < 1 or samplers < 1 or max_insights < 0:
            raise ValueError("population_size and samplers must be >= 1, max_insights >= 0")
        self.variant = variant
        self.name = f"evoengineer-{variant}"
        self.protocol = check_protocol(protocol, self.name)
        self.population_size = population_size
        self.max_insights = max_insights
        self.samplers = samplers
        # evotoolkit: Full initialises until 2 valid members exist, Free and Insight need none
        self.valid_required = valid_required if valid_required is not None else (
            2 if variant == "full" else 0)
        self.max_generations = max_generations  # None: only the evaluation budget stops it
        self.temperature = temperature
        self.templates = TEMPLATES[variant]
        # on_step(trial, snapshot): after each judged proposal (tests and debugging)
        self.on_step: Callable[[int, dict], None] | None = None

    def settings(self, budget: Budget | None = None) -> dict[str, Any]:
        return {
            "variant": self.variant, "protocol": self.protocol,
            "population": self.population_size, "insights": self.max_insights,
            "samplers": self.samplers, "valid_required": self.valid_required,
            "max_generations": self.max_generations, "temperature": self.temperature,
            "parent_selection": "valid only, with replacement, w=1/(i+n)",
            "seed_kernel": "used when the op has one",
        }

    # -- the search ------------------------------------------------------------------------
    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        rng = method_rng(task, self.name)
        pop = ElitePopulation(self.population_size)
        seed = seed_solution(task)
        if seed is not None and seed.valid:
            pop.add(seed)
        eager_us = seed.eager_us if seed is not None else None
        trial, generation, initialising = 0, 0, True
        while trial < budget.evaluations:
            if not initialising and self.max_generations is not None and generation >= self.max_generations:
                return
            batch = self.operators(initialising)
            snapshot = pop.members  # every prompt of a generation sees this population
            best = pop.best
            thoughts = [m.thought for m in snapshot if m.thought and m.thought.strip()]
            done: list[Solution] = []
            for operator in batch[: budget.evaluations - trial]:
                parents = self.select(snapshot, PARENTS[operator], rng)
                insights = (_sample(thoughts, self.max_insights, rng)
                            if self.variant != "free" else [])
                template = "evoengineer/free.j2" if self.variant == "free" else f"evoengineer/{operator}.j2"
                msgs = messages(task, template, best=best, parents=parents, insights=insights,
                                seed_runtime_us=eager_us)
                proposal = ask(llm, msgs, task=task, method=self.name, trial=trial,
                               operator=operator, parents=parents or ([best] if best else []),
                               temperature=self.temperature,
                               stage="init" if initialising else "evolve")
                evaluate(proposal)
                yield proposal
                sol = Solution.from_proposal(proposal, trial)
                if eager_us is None:
                    eager_us = eager_runtime(proposal.verdict)
                if not proposal.parse_error:
                    done.append(sol)
                if self.on_step is not None:
                    self.on_step(trial, {
                        "operator": operator, "generation": generation,
                        "parents": [p.candidate_id for p in parents],
                        "members": [m.candidate_id for m in snapshot],
                        "eligible": [m.candidate_id for m in by_fitness(snapshot)],
                        "best": best.candidate_id if best else None,
                        "insights_shown": insights, "thought_pool": list(thoughts),
                    })
                trial += 1
            for sol in done:  # population management after the generation
                pop.add(sol)
            if initialising:
                # evotoolkit: init batches until `valid_required` valid members, then generation 1
                if len(pop.valid) >= self.valid_required:
                    initialising, generation = False, 1
            else:
                generation += 1

    def operators(self, initialising: bool) -> list[str]:
        """One generation's operators: ``samplers`` inits, or for Full an equal number of
        crossover and mutation prompts (evotoolkit: the largest multiple of the operator count
        that fits ``samplers``)."""
        if initialising or self.variant != "full":
            return ["init"] * self.samplers
        per = max(1, self.samplers // 2)
        return ["crossover"] * per + ["mutation"] * per

    def select(self, members: list[Solution], k: int, rng: random.Random) -> list[Solution]:
        """``k`` parents from the valid members (fastest first, with replacement, weight
        1/(i + n)); with no valid member, the first ``k`` members (evotoolkit's fallback)."""
        if k <= 0:
            return []
        valid = by_fitness(members)
        if not valid:
            return list(members[:k])
        return rank_choices(valid, k, rng, offset=len(valid))


def _sample(pool: list[str], k: int, rng: random.Random) -> list[str]:
    """evotoolkit's _get_n_random_thought: all thoughts when there are <= k, else k at random."""
    return list(pool) if len(pool) <= k else rng.sample(pool, k)


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
