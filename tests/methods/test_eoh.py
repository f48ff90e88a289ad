"""EoH against FeiLiu36/EoH (eoh/eoh.py, evolution.py, config.py), driven by a scripted model
behind the real loopback OpenAI server: 2N init, the five operators and their parent counts,
parents only from the managed (valid, de-duplicated) population, no measurements in prompts,
one-sentence ideas in braces, extraction and duplicate-code retries that cost no evaluation."""

from __future__ import annotations

import re

import pytest

from harness.methods.base import Budget
from harness.methods.common import Solution
from harness.methods.eoh import EoH, manage, parse_idea_and_code, schedule
from tests.methods.scripted_llm import FakeEvaluate, ScriptedServer, kernel
from tests.methods.test_evoengineer import make_task


def eoh_reply(i: int, runtime: float | None, idea: str | None = None) -> str:
    return f"{{{idea or f'idea number {i} tiles the rows'}}}\n```python\n{kernel(f'T{i}', runtime)}```\n"


def drive(method, responder, budget):
    ev = FakeEvaluate()
    with ScriptedServer(responder) as srv:
        props = list(method.optimize(make_task(), srv.model(), ev, Budget(evaluations=budget)))
        return props, srv.prompts(), ev


def test_schedule_is_2n_init_then_each_operator_in_turn():
    s = schedule(110, 5)
    assert s[0] == ("i1", 10) and sum(n for _, n in s) == 110
    assert [op for op, _ in s[1:6]] == ["e1", "e2", "m1", "m2", "m3"]
    assert EoH().default_budget == 110  # FeiLiu36/EoH defaults: 2N + 20 generations x N, N = 5
    with pytest.raises(ValueError, match="operators"):
        EoH(operators="e1,m9")


def test_operators_parents_and_prompts_follow_the_source():
    runtimes = {i: (None if i in (1, 4, 12) else 100.0 - i) for i in range(40)}
    props, prompts, ev = drive(EoH(), lambda m, i: eoh_reply(i, runtimes[i]), budget=35)
    ops = [p.operator for p in props]
    assert ops == ["i1"] * 10 + ["e1"] * 5 + ["e2"] * 5 + ["m1"] * 5 + ["m2"] * 5 + ["m3"] * 5
    invalid = {p.candidate_id for p in ev.proposals if not p.verdict.valid}
    counts = {"i1": 0, "e1": 2, "e2": 2, "m1": 1, "m2": 1, "m3": 1}
    for p, prompt in zip(props, prompts, strict=True):
        assert len(p.parent_ids) == counts[p.operator]
        assert not set(p.parent_ids) & invalid  # invalid individuals are discarded, never parents
        for measured in ("RUNTIME_US", "Measured", "speedup", " us"):
            assert measured not in prompt.replace("# RUNTIME_US", "")  # only inside parents' code
        assert "REFERENCE_MARKER" in prompt
    init_ids = {p.candidate_id for p in props[:10]}
    assert all(set(p.parent_ids) <= init_ids for p in props[10:15])  # from the population at batch start
    assert "in one sentence" in prompts[0] and "inside a brace" in prompts[0]
    assert "totally different form" in prompts[10] and prompts[10].count("No.") == 2
    assert "common backbone idea" in prompts[15]
    assert "Kernel description: idea number" in prompts[20]
    assert "different parameter settings" in prompts[25]
    assert "overfit to in-distribution" in prompts[30] and "inside a brace" not in prompts[30]
    assert props[11].thought.startswith("idea number")


def test_population_is_valid_deduplicated_and_the_best_n():
    sols = [Solution(code=f"c{i}", runtime_us=rt, valid=rt is not None, trial=i)
            for i, rt in enumerate([30.0, None, 10.0, 10.0, 20.0, 40.0, 50.0, 5.0])]
    kept = manage(sols, 5)
    assert [s.runtime_us for s in kept] == [5.0, 10.0, 20.0, 30.0, 40.0]


def test_extraction_and_duplicate_retries_cost_llm_calls_not_evaluations():
    def responder(messages, i):
        if i in (2, 3):
            return "I would tile it."  # no code: asked again
        if i == 12:  # an e1 offspring repeating a population member's code: generated again
            return eoh_reply(11, 89.0)  # call 11 made the fastest init kernel
        return eoh_reply(i, 100.0 - i)

    props, prompts, ev = drive(EoH(), responder, budget=11)
    assert len(ev.proposals) == 11 and len(prompts) == 14  # 2 extraction retries + 1 duplicate retry
    assert all(not p.parse_error for p in props)
    assert "totally different form" in prompts[12] and "totally different form" in prompts[13]
    assert "TAG=T11" not in props[10].source and "TAG=T13" in props[10].source


def test_ideas_are_read_from_braces_or_the_text_before_the_code():
    got = parse_idea_and_code(eoh_reply(3, 10.0, idea="one warp per row with shuffles"))
    assert got.ok and got.thought == "one warp per row with shuffles"
    offline = "## Name\nrelu_b256\n## Thought\nApply relu in one pass.\n## Code\n```python\n" + kernel("X", 1.0) + "```\n"
    assert "Apply relu in one pass." in parse_idea_and_code(offline).thought
    assert not parse_idea_and_code("no code at all").ok


def test_an_empty_population_falls_back_to_i1():
    props, prompts, _ = drive(EoH(pop_size=2), lambda m, i: eoh_reply(i, None), budget=6)
    assert [p.operator for p in props] == ["i1"] * 6
    assert all(re.search(r"No\.\d", p) is None for p in prompts)


@pytest.mark.slow
def test_harness_run_with_the_offline_model_completes_and_stores_results(tmp_path):
    from tests.methods.f2_scripted import assert_offline_run_stored, run_offline_cli

    proc, con = run_offline_cli("eoh", tmp_path / "results")
    assert_offline_run_stored(proc, con, "eoh", ["relu"], 3)
