"""FunSearch (Romera-Paredes et al., Nature 2024) adapted to kernels.

A program database of ``num_islands`` islands (5). Within an island, correct programs are
clustered by score (score = -ln(runtime), rounded, so kernels within ~1% runtime share a
cluster). Each proposal: pick an island uniformly, sample ``programs_per_prompt`` (2)
clusters from it with a softmax over cluster scores (temperature ``temperature``), one
program per cluster preferring shorter code, list them as versions in increasing order of
score and ask for the next version. A correct result joins the island it came from;
incorrect ones are discarded (as in FunSearch). Every ``reset_every`` evaluations, the
weaker half of the islands is emptied and each is re-founded with the best program of a
randomly chosen surviving island.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from harness.llm.base import ChatModel
from harness.methods import prompting
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import Solution, ask, method_rng

NAME = "funsearch"


def score_of(sol: Solution) -> float:
    """Higher is better: -ln(runtime in us) for valid solutions."""
    if not sol.valid or sol.runtime_us is None or sol.runtime_us <= 0:
        return -math.inf
    return -math.log(sol.runtime_us)


@dataclass
class Cluster:
    score: float
    programs: list[Solution] = field(default_factory=list)

    def sample(self, rng: random.Random) -> Solution:
        """Shorter programs are more likely (softmax over negative normalised length)."""
        lengths = [len(p.code) for p in self.programs]
        lo, hi = min(lengths), max(lengths)
        logits = [-(n - lo) / (hi - lo + 1e-6) for n in lengths]
        return self.programs[_softmax_choice(logits, 1.0, rng)]


@dataclass
class Island:
    clusters: dict[float, Cluster] = field(default_factory=dict)

    def register(self, sol: Solution, score: float) -> None:
        key = round(score, 2)
        self.clusters.setdefault(key, Cluster(score=key)).programs.append(sol)

    @property
    def best(self) -> Solution | None:
        progs = [p for c in self.clusters.values() for p in c.programs]
        return max(progs, key=lambda p: (score_of(p), -p.trial)) if progs else None

    @property
    def best_score(self) -> float:
        b = self.best
        return score_of(b) if b is not None else -math.inf

    def __len__(self) -> int:
        return sum(len(c.programs) for c in self.clusters.values())


class ProgramDatabase:
    """The islands of one op's search."""

    def __init__(
        self, num_islands: int = 5, programs_per_prompt: int = 2, temperature: float = 0.1
    ):
        if num_islands < 1 or programs_per_prompt < 1:
            raise ValueError("num_islands and programs_per_prompt must be >= 1")
        self.islands = [Island() for _ in range(num_islands)]
        self.k = programs_per_prompt
        self.temperature = temperature

    def register(self, island_id: int, sol: Solution) -> bool:
        """Add a correct program to an island; incorrect ones are discarded (returns False)."""
        s = score_of(sol)
        if s == -math.inf:
            return False
        self.islands[island_id].register(sol, s)
        return True

    def sample(self, rng: random.Random) -> tuple[int, list[Solution]]:
        """(island id, parents in increasing order of score)."""
        island_id = rng.randrange(len(self.islands))
        clusters = list(self.islands[island_id].clusters.values())
        chosen: list[Cluster] = []
        pool = list(clusters)
        for _ in range(min(self.k, len(pool))):
            i = _softmax_choice([c.score for c in pool], self.temperature, rng)
            chosen.append(pool.pop(i))
        parents = [c.sample(rng) for c in chosen]
        parents.sort(key=lambda p: (score_of(p), p.trial))
        return island_id, parents

    def reset_weakest(self, rng: random.Random) -> list[int]:
        """Empty the weaker half of the islands and re-found each with the best program of a
        random surviving island. Returns the ids of the reset islands."""
        n = len(self.islands)
        order = sorted(range(n), key=lambda i: (self.islands[i].best_score, rng.random()))
        weak, survivors = order[: n // 2], order[n // 2 :]
        for i in weak:
            self.islands[i] = Island()
            founder = self.islands[rng.choice(survivors)].best
            if founder is not None:
                self.islands[i].register(founder, score_of(founder))
        return weak


class FunSearch:
    name = NAME
    variant = "islands"
    paper = "Romera-Paredes et al. 2024, Mathematical discoveries from program search with LLMs (FunSearch)"
    default_budget = 45

    def __init__(
        self,
        num_islands: int = 5,
        programs_per_prompt: int = 2,
        reset_every: int | None = None,
        temperature: float = 0.1,
    ):
        self.num_islands = num_islands
        self.programs_per_prompt = programs_per_prompt
        self.reset_every = reset_every
        self.temperature = temperature

    def reset_period(self, evaluations: int) -> int:
        """Evaluations between island resets: given, or a third of the budget (>= 5)."""
        return self.reset_every if self.reset_every else max(5, evaluations // 3)

    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        rng = method_rng(task, NAME)
        db = ProgramDatabase(self.num_islands, self.programs_per_prompt, self.temperature)
        self.database = db  # the last op's database, for inspection
        period = self.reset_period(budget.evaluations)
        for trial in range(budget.evaluations):
            if trial and trial % period == 0:
                db.reset_weakest(rng)
            island_id, parents = db.sample(rng)
            msgs = prompting.messages(task, "funsearch/user.j2", versions=parents)
            p = ask(
                llm,
                msgs,
                task=task,
                method=NAME,
                trial=trial,
                operator=f"island{island_id}",
                parents=parents,
            )
            evaluate(p)
            db.register(island_id, Solution.from_proposal(p, trial=trial))
            yield p


def _softmax_choice(logits: list[float], temperature: float, rng: random.Random) -> int:
    t = max(temperature, 1e-9)
    top = max(logits)
    weights = [math.exp((x - top) / t) for x in logits]
    return rng.choices(range(len(logits)), weights=weights, k=1)[0]
