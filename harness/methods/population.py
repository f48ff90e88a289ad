"""Population management shared by the evolutionary methods.

* ``rank_select``: parents drawn by rank with probability proportional to ``1 / (rank + N)``,
  rank 1 = fastest valid solution, N = population size (EvoEngineer-Full, EoH). Parents of one
  proposal are distinct.
* ``ElitePopulation``: keeps the best valid solutions (elite preservation), topping up with
  the most recent invalid ones only while slots remain.
* ``sample_insights``: up to k distinct insights (thoughts) drawn without replacement.
* ``rank_choices``: the sources' own draw: k parents *with* replacement, weight
  ``1 / (i + offset)`` for the i-th best (i from 0). evotoolkit's EvoEngineer uses
  offset = number of valid solutions; FeiLiu36/EoH uses offset = population size + 1.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from harness.methods.common import Solution


def rank_weights(n_members: int, population_size: int | None = None) -> list[float]:
    """Weights for ranks 1..n_members: w(rank) = 1 / (rank + N)."""
    big_n = population_size if population_size is not None else n_members
    return [1.0 / (rank + big_n) for rank in range(1, n_members + 1)]


def rank_select(
    members: Sequence[Solution],
    k: int,
    rng: random.Random,
    population_size: int | None = None,
) -> list[Solution]:
    """Draw ``k`` distinct parents; ``members`` are ranked by fitness (fastest valid first)."""
    ranked = sorted(members, key=lambda s: (s.fitness, -s.trial))
    if k >= len(ranked):
        return list(ranked)
    pool = list(range(len(ranked)))
    weights = rank_weights(len(ranked), population_size)
    chosen: list[int] = []
    for _ in range(k):
        w = [weights[i] for i in pool]
        pick = rng.choices(pool, weights=w, k=1)[0]
        chosen.append(pick)
        pool.remove(pick)
    return [ranked[i] for i in chosen]


class ElitePopulation:
    """A fixed-size population: best valid first, then recent invalid while slots remain."""

    def __init__(self, size: int = 5):
        if size < 1:
            raise ValueError("population size must be >= 1")
        self.size = size
        self._valid: list[Solution] = []
        self._invalid: list[Solution] = []  # most recent last

    def add(self, s: Solution) -> None:
        if s.valid and s.runtime_us is not None:
            self._valid.append(s)
            self._valid.sort(key=lambda x: (x.fitness, x.trial))
            del self._valid[self.size :]
        else:
            self._invalid.append(s)
            del self._invalid[: max(0, len(self._invalid) - self.size)]

    @property
    def valid(self) -> list[Solution]:
        return list(self._valid)

    @property
    def members(self) -> list[Solution]:
        free = self.size - len(self._valid)
        recent_invalid = list(reversed(self._invalid))[:free] if free > 0 else []
        return self._valid + recent_invalid

    @property
    def best(self) -> Solution | None:
        return self._valid[0] if self._valid else None

    def __len__(self) -> int:
        return len(self.members)


def sample_insights(pool: Sequence[str], k: int, rng: random.Random) -> list[str]:
    """Up to ``k`` distinct non-empty insights, sampled uniformly without replacement."""
    uniq = list(dict.fromkeys(t.strip() for t in pool if t and t.strip()))
    if len(uniq) <= k:
        return uniq
    return rng.sample(uniq, k)


def rank_choices(
    ranked: Sequence[Solution], k: int, rng: random.Random, offset: int
) -> list[Solution]:
    """``k`` draws with replacement from ``ranked`` (best first), weight ``1 / (i + offset)``."""
    if not ranked or k <= 0:
        return []
    weights = [1.0 / (i + offset) for i in range(len(ranked))]
    return list(rng.choices(list(ranked), weights=weights, k=k))


def by_fitness(members: Sequence[Solution]) -> list[Solution]:
    """Valid solutions, fastest first (ties: the earlier trial first)."""
    return sorted((m for m in members if m.valid and m.runtime_us is not None),
                  key=lambda s: (s.fitness, s.trial))
