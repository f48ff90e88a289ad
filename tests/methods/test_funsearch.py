"""FunSearch: islands clustered by score, parents from one island listed as versions by score,
periodic reset of the weakest islands, budget stop."""

from __future__ import annotations

import random
import re

import pytest

from harness.methods.base import Budget
from harness.methods.common import Solution
from harness.methods.funsearch import FunSearch, ProgramDatabase, score_of
from tests.methods.f2_scripted import FakeEvaluate, ScriptedLLM, kernel, task_context


def sol(runtime: float | None, trial: int = 0, code: str = "x") -> Solution:
    return Solution(code=code, name=f"s{trial}", runtime_us=runtime, valid=runtime is not None, trial=trial)


def test_programs_are_clustered_by_score_and_incorrect_ones_discarded():
    db = ProgramDatabase(num_islands=2)
    assert not db.register(0, sol(None))
    db.register(0, sol(10.0, 1))
    db.register(0, sol(10.02, 2))  # within ~0.2%: same cluster
    db.register(0, sol(20.0, 3))
    clusters = db.islands[0].clusters
    assert sorted(len(c.programs) for c in clusters.values()) == [1, 2]
    assert len(db.islands[1]) == 0
    assert db.islands[0].best.trial == 1


def test_parents_come_from_one_island_in_increasing_order_of_score():
    db = ProgramDatabase(num_islands=3, programs_per_prompt=2, temperature=10.0)
    for island in range(3):
        for j, rt in enumerate((40.0, 30.0, 20.0, 10.0)):
            db.register(island, sol(rt, trial=island * 10 + j))
    rng = random.Random(1)
    for _ in range(50):
        island, parents = db.sample(rng)
        assert len(parents) == 2
        assert {p.trial // 10 for p in parents} == {island}
        assert score_of(parents[0]) < score_of(parents[1])  # worst first, best last
        assert parents[0].runtime_us != parents[1].runtime_us  # two different clusters


def test_low_temperature_prefers_the_best_clusters():
    db = ProgramDatabase(num_islands=1, programs_per_prompt=1, temperature=0.05)
    for j, rt in enumerate((100.0, 50.0, 10.0)):
        db.register(0, sol(rt, j))
    rng = random.Random(0)
    picks = [db.sample(rng)[1][0].runtime_us for _ in range(200)]
    assert picks.count(10.0) > 190


def test_reset_empties_the_weakest_islands_and_refounds_them_from_survivors():
    db = ProgramDatabase(num_islands=5)
    best_runtimes = [50.0, 10.0, 40.0, 20.0, 30.0]  # island 1 strongest, island 0 weakest
    for i, rt in enumerate(best_runtimes):
        db.register(i, sol(rt * 2, trial=100 + i))
        db.register(i, sol(rt, trial=i))
    reset = db.reset_weakest(random.Random(3))
    assert sorted(reset) == [0, 2]  # the two weakest of five
    survivors_best = {db.islands[i].best.trial for i in (1, 3, 4)}
    for i in reset:
        assert len(db.islands[i]) == 1  # only the founder
        assert db.islands[i].best.trial in survivors_best
    assert len(db.islands[1]) == 2  # survivors untouched


def test_prompt_lists_versions_in_order_of_score_and_results_join_their_island():
    runtimes = iter([50.0, 40.0, 30.0, 20.0, 15.0, 12.0, 11.0, 10.5] + [9.0] * 50)

    def reply(call, i):
        rt = next(runtimes)
        return kernel(rt, name=f"rt{rt}")

    llm = ScriptedLLM(reply)
    method = FunSearch(num_islands=2, reset_every=1000)
    props = list(method.optimize(task_context(), llm, FakeEvaluate(), Budget(evaluations=20)))
    assert len(props) == 20
    assert "Write version 0" in llm.calls[0].prompt
    two_versions = [c for c in llm.calls if "Version 1" in c.prompt]
    assert two_versions, "once islands hold 2 clusters, prompts list 2 versions"
    for c in two_versions:
        rts = [float(x) for x in re.findall(r"Version \d+: rt([0-9.]+)", c.prompt)]
        assert rts == sorted(rts, reverse=True)  # slower first: increasing order of score
        assert "Write version 2" in c.prompt
    # every stored program sits on the island that the proposal's prompt came from
    for p in props:
        island = int(p.operator.removeprefix("island"))
        ids = {s.candidate_id for c in method.database.islands[island].clusters.values() for s in c.programs}
        assert p.candidate_id in ids


def test_islands_are_reset_periodically(monkeypatch):
    resets: list[int] = []
    orig = ProgramDatabase.reset_weakest

    def spy(self, rng):
        resets.append(sum(len(i) for i in self.islands))
        return orig(self, rng)

    monkeypatch.setattr(ProgramDatabase, "reset_weakest", spy)
    llm = ScriptedLLM(lambda call, i: kernel(100.0 / (i + 1)))
    method = FunSearch()
    props = list(method.optimize(task_context(), llm, FakeEvaluate(), Budget(evaluations=45)))
    assert method.reset_period(45) == 15
    assert len(resets) == 2  # at evaluations 15 and 30
    assert len(props) == 45


def test_same_seed_same_island_choices():
    def go(seed):
        llm = ScriptedLLM(lambda call, i: kernel(100.0 - i))
        props = list(FunSearch().optimize(task_context(seed=seed), llm, FakeEvaluate(), Budget(evaluations=12)))
        return [p.operator for p in props]

    assert go(7) == go(7)


@pytest.mark.slow
def test_harness_run_with_the_offline_model_completes_and_stores_results(tmp_path):
    from tests.methods.f2_scripted import assert_offline_run_stored, run_offline_cli

    proc, con = run_offline_cli("funsearch", tmp_path / "results")
    assert_offline_run_stored(proc, con, "funsearch", ["relu"], 3)
