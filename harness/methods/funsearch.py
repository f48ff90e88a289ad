"""FunSearch (Romera-Paredes et al., Nature 2024), after google-deepmind/funsearch
``implementation/`` (programs_database.py, sampler.py, config.py, funsearch.py).

* **Initial program on every island.** The op's seed kernel (judged by the runner) is registered
  on all ``num_islands`` (10) islands before sampling starts. An op without a seed kernel starts
  from empty islands: its first correct program is registered on every island, as the initial
  program would be (until then prompts hold no version).
* **Islands and clusters.** Correct programs join the island their prompt came from, in the
  cluster of their score (the per-test signature; here one test: ``-ln(runtime)`` rounded to
  0.01, so kernels within ~1% share a cluster); incorrect ones are discarded.
* **Prompts.** Pick an island uniformly; draw ``min(k, clusters)`` clusters *with replacement*
  from a softmax over cluster scores at temperature ``T0 * (1 - (n % period) / period)`` (n =
  programs on the island; T0 0.1, period 30,000), one program per cluster (shorter programs
  likelier), sorted by increasing score, shown as code only (``funsearch_program``).
* **Samples per prompt.** Each prompt is sampled ``samples_per_prompt`` (4) times; each sample
  is one evaluation.
* **Resets.** The weaker half of the islands is emptied and each is re-founded with the best
  program of a random surviving island, on the source's schedule: every ``reset_period_s``
  seconds of the op's search (4 hours). ``reset_every=N`` resets every N samples instead
  (deterministic, not the source's).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.llm.base import ChatModel
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import Solution, ask, method_rng, seed_solution
from harness.methods.evoengineer import check_protocol
from harness.methods.funsearch_program import parse_completion, program_messages

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
        """Shorter programs likelier: softmax(-(len - min) / (max + 1e-6)) at temperature 1."""
        lengths = [len(p.code) for p in self.programs]
        lo, hi = min(lengths), max(lengths)
        logits = [-(n - lo) / (hi + 1e-6) for n in lengths]
        return self.programs[_softmax_choice(logits, 1.0, rng)]


@dataclass
class Island:
    clusters: dict[float, Cluster] = field(default_factory=dict)
    num_programs: int = 0

    def register(self, sol: Solution, score: float) -> None:
        key = round(score, 2)
        self.clusters.setdefault(key, Cluster(score=key)).programs.append(sol)
        self.num_programs += 1

    @property
    def best(self) -> Solution | None:
        progs = [p for c in self.clusters.values() for p in c.programs]
        return max(progs, key=lambda p: (score_of(p), -p.trial)) if progs else None

    @property
    def best_score(self) -> float:
        b = self.best
        return score_of(b) if b is not None else -math.inf

    def __len__(self) -> int:
        return self.num_programs


class ProgramDatabase:
    """The islands of one op's search."""

    def __init__(self, num_islands: int = 10, programs_per_prompt: int = 2,
                 temperature: float = 0.1, temperature_period: int = 30_000):
        if num_islands < 1 or programs_per_prompt < 1 or temperature_period < 1:
            raise ValueError("num_islands, programs_per_prompt and temperature_period must be >= 1")
        self.islands = [Island() for _ in range(num_islands)]
        self.k = programs_per_prompt
        self.temperature = temperature
        self.temperature_period = temperature_period

    @property
    def empty(self) -> bool:
        return all(len(i) == 0 for i in self.islands)

    def register(self, island_id: int | None, sol: Solution) -> bool:
        """Add a correct program to an island (to every island when ``island_id`` is None: the
        initial program); incorrect ones are discarded (returns False)."""
        s = score_of(sol)
        if s == -math.inf:
            return False
        for i in range(len(self.islands)) if island_id is None else [island_id]:
            self.islands[i].register(sol, s)
        return True

    def cluster_temperature(self, island: Island) -> float:
        p = self.temperature_period
        return self.temperature * (1 - (island.num_programs % p) / p)

    def sample(self, rng: random.Random) -> tuple[int, list[Solution]]:
        """(island id, programs in increasing order of score); clusters drawn with replacement."""
        island_id = rng.randrange(len(self.islands))
        island = self.islands[island_id]
        clusters = list(island.clusters.values())
        if not clusters:
            return island_id, []
        t = self.cluster_temperature(island)
        chosen = [clusters[_softmax_choice([c.score for c in clusters], t, rng)]
                  for _ in range(min(self.k, len(clusters)))]
        picked = sorted(((c.score, c.sample(rng)) for c in chosen), key=lambda sp: sp[0])
        return island_id, [p for _, p in picked]

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
    default_budget = 45  # evotoolkit's FunSearch baseline (max_sample_nums); the source runs unbounded
    uses_seed_kernel = True
    templates = ("funsearch/program.j2", "funsearch/system.j2")

    def __init__(
        self,
        num_islands: int = 10,
        programs_per_prompt: int = 2,
        samples_per_prompt: int = 4,
        temperature: float = 0.1,
        temperature_period: int = 30_000,
        reset_period_s: float = 4 * 60 * 60,
        reset_every: int | None = None,
        protocol: str = "paper",
    ):
        if samples_per_prompt < 1:
            raise ValueError("samples_per_prompt must be >= 1")
        self.protocol = check_protocol(protocol, NAME)
        self.num_islands = num_islands
        self.programs_per_prompt = programs_per_prompt
        self.samples_per_prompt = samples_per_prompt
        self.temperature = temperature
        self.temperature_period = temperature_period
        self.reset_period_s = reset_period_s
        self.reset_every = reset_every
        self.clock = time.monotonic  # tests may replace it

    def settings(self, budget: Budget | None = None) -> dict[str, Any]:
        return {
            "protocol": self.protocol, "islands": self.num_islands,
            "programs_per_prompt": self.programs_per_prompt,
            "samples_per_prompt": self.samples_per_prompt,
            "cluster_temperature": self.temperature,
            "temperature_period": self.temperature_period,
            "reset_period_s": self.reset_period_s, "reset_every": self.reset_every,
            "prompt": "code only, versions in increasing order of score",
            "seed_kernel": "initial program on every island",
        }

    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        rng = method_rng(task, NAME)
        db = ProgramDatabase(self.num_islands, self.programs_per_prompt, self.temperature,
                             self.temperature_period)
        self.database = db  # the last op's database, for inspection
        seed = seed_solution(task)
        if seed is not None:
            db.register(None, seed)
        last_reset = self.clock()
        trial = 0
        while trial < budget.evaluations:
            island_id, versions = db.sample(rng)
            msgs = program_messages(task, versions)
            k = len(versions)
            for _ in range(min(self.samples_per_prompt, budget.evaluations - trial)):
                p = ask(llm, msgs, task=task, method=NAME, trial=trial,
                        operator=f"island{island_id}", parents=versions, stage="sample",
                        parse=lambda text, k=k: parse_completion(text, k))
                p.name = p.name if p.parse_error else f"v{k}_{trial}"
                evaluate(p)
                sol = Solution.from_proposal(p, trial=trial)
                db.register(None if db.empty else island_id, sol)  # first correct: every island
                trial += 1
                yield p
                if self._reset_due(trial, last_reset):
                    last_reset = self.clock()
                    db.reset_weakest(rng)

    def _reset_due(self, trial: int, last_reset: float) -> bool:
        if self.reset_every:
            return trial % self.reset_every == 0
        return self.clock() - last_reset > self.reset_period_s


def _softmax_choice(logits: list[float], temperature: float, rng: random.Random) -> int:
    t = max(temperature, 1e-9)
    top = max(logits)
    weights = [math.exp((x - top) / t) for x in logits]
    return rng.choices(range(len(logits)), weights=weights, k=1)[0]
