"""EoH: idea + code solutions, operators i1/e1/e2/m1/m2 with their parent counts, rank-based
selection from the population at the batch's start, population management, budget stop."""

from __future__ import annotations

import re

import pytest

from harness.methods.base import Budget
from harness.methods.eoh import EoH, schedule
from harness.methods.population import rank_weights
from tests.methods.f2_scripted import FakeEvaluate, ScriptedLLM, kernel, task_context


def test_schedule_is_i1_then_batches_of_each_operator_45_in_all():
    s = schedule(45, 5)
    assert s[0] == ("i1", 5)
    assert [op for op, _ in s[1:]] == ["e1", "e2", "m1", "m2"] * 2
    assert sum(n for _, n in s) == 45
    assert schedule(7, 5) == [("i1", 5), ("e1", 2)]


def run(budget, pop_size=5, runtimes=None, fail_every=0):
    seq = iter(runtimes or [float(100 - i) for i in range(200)])

    def reply(call, i):
        rt = next(seq)
        if fail_every and i % fail_every == fail_every - 1:
            return kernel(fail="does not compile", name=f"n{i}", thought=f"idea number {i}.")
        return kernel(rt, name=f"n{i}", thought=f"idea number {i}.")

    llm = ScriptedLLM(reply)
    method = EoH(pop_size=pop_size)
    props = list(method.optimize(task_context(), llm, FakeEvaluate(), Budget(evaluations=budget)))
    return method, llm, props


def test_each_operator_gets_its_number_of_parents_and_shows_their_ideas():
    method, llm, props = run(25)
    counts = {"i1": 0, "e1": 2, "e2": 2, "m1": 1, "m2": 1}
    assert [p.operator for p in props] == ["i1"] * 5 + ["e1"] * 5 + ["e2"] * 5 + ["m1"] * 5 + ["m2"] * 5
    for p, call in zip(props, llm.calls, strict=True):
        assert len(p.parent_ids) == counts[p.operator]
        assert len(set(p.parent_ids)) == len(p.parent_ids)
        assert call.prompt.count("Idea: idea number") == counts[p.operator]
    e1_prompt = llm.calls[5].prompt
    assert "totally different" in e1_prompt and "exactly one sentence" in e1_prompt
    assert "backbone" in llm.calls[10].prompt
    assert "parameters" in llm.calls[20].prompt


def test_parents_come_from_the_population_at_the_batch_start():
    method, llm, props = run(15)
    init_ids = {p.candidate_id for p in props[:5]}
    e1_ids = {p.candidate_id for p in props[5:10]}
    for p in props[5:10]:  # e1 batch: parents only among the i1 solutions
        assert set(p.parent_ids) <= init_ids
    for p in props[10:15]:  # e2 batch: population = best 5 of i1 + e1 (runtimes fall: the e1 kernels)
        assert set(p.parent_ids) <= e1_ids


def test_population_keeps_the_best_valid_solutions_then_recent_invalid():
    method, _, props = run(10, runtimes=[50.0, 10.0, 40.0, 20.0, 30.0, 5.0, 60.0, 70.0, 80.0, 1.0])
    pop = method.population.members
    assert [s.runtime_us for s in pop] == [1.0, 5.0, 10.0, 20.0, 30.0]
    method, _, _ = run(5, fail_every=2)  # i1: 3 valid, 2 invalid -> 5 slots: 3 valid + 2 invalid
    members = method.population.members
    assert [s.valid for s in members] == [True, True, True, False, False]


def test_parent_choice_follows_rank_weights():
    # pop 5 of fixed ranks; over many m1 draws the fastest is drawn most, in the ratio 1/(r+N)
    method, llm, props = run(5 + 5 * 400, runtimes=[10.0, 20.0, 30.0, 40.0, 50.0] + [999.0] * 5000)
    init = {p.candidate_id: i for i, p in enumerate(props[:5])}  # rank = index + 1
    m1_parents = [init[p.parent_ids[0]] for p in props if p.operator in ("m1", "m2")]
    freq = [m1_parents.count(r) / len(m1_parents) for r in range(5)]
    w = rank_weights(5, 5)
    expected = [x / sum(w) for x in w]
    assert all(abs(f - e) < 0.04 for f, e in zip(freq, expected, strict=True))
    assert freq[0] > freq[4]


def test_operators_fall_back_to_i1_when_the_population_is_too_small():
    method, llm, props = run(4, pop_size=1)
    # schedule: i1, e1, e2, m1; e1 and e2 need 2 parents but the population holds 1
    assert [p.operator for p in props] == ["i1", "i1", "i1", "m1"]
    assert re.search(r"Kernel 1", llm.calls[3].prompt) and "Kernel 2" not in llm.calls[3].prompt


def test_budget_stop():
    _, llm, props = run(13)
    assert len(props) == 13 and len(llm.calls) == 13


@pytest.mark.slow
def test_harness_run_with_the_offline_model_completes_and_stores_results(tmp_path):
    from tests.methods.f2_scripted import assert_offline_run_stored, run_offline_cli

    proc, con = run_offline_cli("eoh", tmp_path / "results")
    assert_offline_run_stored(proc, con, "eoh", ["relu"], 3)
