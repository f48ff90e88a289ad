"""The reply parser (labels vs text, missing parts) and the shared population helpers
(rank-based selection with p ~ 1/(rank + N), elite population, insight sampling)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from harness.methods.common import Solution
from harness.methods.population import ElitePopulation, rank_select, rank_weights, sample_insights
from harness.methods.reply import format_reply, parse_reply

CODE = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"


def test_thought_starting_with_a_label_word_is_text_not_a_label():
    r = parse_reply(format_reply("k1", "Name the tiles after their rows.\nCode paths stay short.", CODE))
    assert r.ok and r.name == "k1" and r.thought == "Name the tiles after their rows.\nCode paths stay short."
    r = parse_reply(format_reply("k2", "idea-driven tiling", CODE))
    assert r.thought == "idea-driven tiling"


def test_bold_and_colon_labels_parse():
    r = parse_reply(f"**Name:** fast one\n**Thought:** use smem\n```python\n{CODE}```")
    assert (r.name, r.thought) == ("fast_one", "use smem")
    r = parse_reply(f"Name: a\nThought: b\nc\n```\n{CODE}```")
    assert (r.name, r.thought) == ("a", "b\nc")


def test_reply_without_modelnew_is_a_parse_error_with_reason():
    assert parse_reply("no code here").error == "no fenced code block in the reply"
    assert parse_reply("```python\nprint(1)\n```").error == "no code block defines ModelNew (class ModelNew, or ModelNew = YourClass)"
    assert parse_reply("").error == "empty reply"
    # the reference's Model quoted back is not a candidate; neither is a comparison with ModelNew
    assert not parse_reply("```python\nclass Model(nn.Module):\n    pass\n```").ok
    assert not parse_reply("```python\nif ModelNew == 1:\n    pass\n```").ok


@pytest.mark.parametrize("binding", ["class ModelNew(nn.Module):\n    pass",
                                     "class Fast(nn.Module):\n    pass\nModelNew = Fast",
                                     "class Fast(nn.Module):\n    pass\nModelNew: type = Fast"])
def test_reply_binding_modelnew_as_the_evaluator_accepts_is_parsed(binding):
    """The evaluator judges ``ModelNew = YourClass`` (sandbox/intake/candidate.py); the reply parser takes it
    too, and picks the block that binds it over one that quotes the reference."""
    text = f"## Name\nx\n## Code\n```python\nclass Model(nn.Module):\n    pass\n```\n```python\n{binding}\n```\n"
    r = parse_reply(text)
    assert r.ok and r.code.strip() == binding, r


def sol(cid, rt):
    return Solution(code="", runtime_us=rt, valid=rt is not None, candidate_id=cid, trial=cid)


def test_rank_selection_probability_is_one_over_rank_plus_n():
    members = [sol(i, rt) for i, rt in enumerate([30.0, 10.0, 50.0, 20.0, 40.0])]
    rng = random.Random(1)
    counts = Counter(rank_select(members, 1, rng, population_size=5)[0].candidate_id for _ in range(40000))
    w = rank_weights(5, 5)
    assert w == [1 / 6, 1 / 7, 1 / 8, 1 / 9, 1 / 10]
    expected = {cid: w[r] / sum(w) for r, cid in enumerate([1, 3, 0, 4, 2])}  # ranked by runtime
    for cid, p in expected.items():
        assert abs(counts[cid] / 40000 - p) < 0.01, (cid, counts[cid] / 40000, p)


def test_two_parents_are_distinct_and_invalid_rank_last():
    members = [sol(0, None), sol(1, 5.0), sol(2, 7.0)]
    rng = random.Random(0)
    for _ in range(200):
        a, b = rank_select(members, 2, rng, population_size=5)
        assert a.candidate_id != b.candidate_id


def test_elite_population_keeps_best_valid_and_tops_up_with_recent_invalid():
    pop = ElitePopulation(3)
    pop.add(sol(0, None))
    pop.add(sol(1, None))
    pop.add(sol(2, 9.0))
    assert [m.candidate_id for m in pop.members] == [2, 1, 0]  # recent invalid first
    pop.add(sol(3, 8.0))
    assert [m.candidate_id for m in pop.members] == [3, 2, 1]
    pop.add(sol(4, 1.0))
    pop.add(sol(5, 99.0))
    assert [m.candidate_id for m in pop.members] == [4, 3, 2]
    assert pop.best.candidate_id == 4


def test_insight_sampling_is_distinct_and_bounded():
    rng = random.Random(3)
    assert sample_insights(["a", "a", "", "b"], 3, rng) == ["a", "b"]
    got = sample_insights([str(i) for i in range(10)], 3, rng)
    assert len(got) == 3 and len(set(got)) == 3
