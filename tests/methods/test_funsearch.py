"""FunSearch against google-deepmind/funsearch implementation/ (programs_database.py, sampler.py,
config.py), driven by a scripted model behind the real loopback OpenAI server: the initial
program on every island, code-only prompts with versions in increasing order of score, k
programs, samples per prompt, clusters, and resets only on the source's schedule."""

from __future__ import annotations

import random
import re

import pytest

from harness.methods.base import Budget
from harness.methods.common import Solution
from harness.methods.funsearch import FunSearch, ProgramDatabase, score_of
from harness.methods.funsearch_program import parse_completion
from tests.methods.scripted_llm import FakeEvaluate, ScriptedServer, kernel, seeded
from tests.methods.test_evoengineer import make_task


def sol(runtime: float | None, trial: int = 0, code: str = "x") -> Solution:
    return Solution(code=code, name=f"s{trial}", runtime_us=runtime, valid=runtime is not None, trial=trial)


def completion(i: int, runtime: float | None) -> str:
    """A chat model's completion: the new version's class in a fenced block."""
    code = kernel(f"T{i}", runtime).replace("class ModelNew(", "class ModelNew_v9(")
    return f"```python\n{code}```\n"


def drive(method, runtimes, budget, task=None):
    seq = list(runtimes)

    def responder(messages, i):
        k = int(re.search(r"class ModelNew_v(\d+)\(nn\.Module\):\s*\n\s*\"\"\"", messages[-1]["content"]).group(1))
        return completion(i, seq[i % len(seq)]).replace("ModelNew_v9", f"ModelNew_v{k}")

    ev = FakeEvaluate()
    with ScriptedServer(responder) as srv:
        props = list(method.optimize(task or seeded(make_task()), srv.model(), ev, Budget(evaluations=budget)))
        return props, srv.requests, ev


def test_prompts_are_code_only_versions_by_increasing_score_sampled_four_times_each():
    props, requests, _ = drive(FunSearch(), [50.0, 40.0, None, 30.0, 20.0, 10.0], budget=16)
    users = [r["messages"][-1]["content"] for r in requests]
    assert len(users) == 16
    for i in range(0, 16, 4):  # each prompt is sampled samples_per_prompt = 4 times
        assert users[i] == users[i + 1] == users[i + 2] == users[i + 3]
    first = users[0]
    assert "class ModelNew_v0(" in first and "TAG=SEED" in first  # the initial program
    assert 'class ModelNew_v1(nn.Module):\n    """Improved version of `ModelNew_v0`."""' in first
    assert first.rstrip().endswith('"""Improved version of `ModelNew_v0`."""')  # ends at the header
    for u in users:
        assert "REFERENCE_MARKER" in u and "no PyTorch compute fallback" in u
        for measured in ("RUNTIME_US", "Measured", "speedup", "runtime"):
            assert measured.lower() not in u.lower().replace("# runtime_us", "")
        assert "## Name" not in u and "Reply with" not in u  # code only
        k = len(re.findall(r"^class ModelNew_v\d+\(", u, re.M)) - 1
        assert 1 <= k <= 2  # k = min(programs_per_prompt, clusters) versions, then the header
        assert f"class ModelNew_v{k}(nn.Module):" in u
    runtimes = {f"T{i}": rt for i, rt in enumerate([50.0, 40.0, None, 30.0, 20.0, 10.0] * 3)}
    runtimes["SEED"] = 80.0
    for u in users:  # increasing score = decreasing runtime, the best version last
        shown = [runtimes[t] for t in re.findall(r"TAG=(\w+)", u)]
        assert shown == sorted(shown, reverse=True)
    assert requests[0]["messages"][0]["role"] == "system" and "code only" in requests[0]["messages"][0]["content"]


def test_initial_program_on_every_island_and_results_join_the_prompt_island():
    method = FunSearch(num_islands=5)
    props, _, ev = drive(method, [50.0, None, 45.0, 44.0], budget=12)
    for island in method.database.islands:
        ids = {p.candidate_id for c in island.clusters.values() for p in c.programs}
        assert 999 in ids  # the seed kernel's candidate id
    for p in props:
        island = method.database.islands[int(p.operator.removeprefix("island"))]
        ids = {s.candidate_id for c in island.clusters.values() for s in c.programs}
        assert (p.candidate_id in ids) == p.verdict.valid  # incorrect programs are discarded


def test_without_a_seed_the_first_correct_program_founds_every_island():
    method = FunSearch(num_islands=3)
    props, requests, _ = drive(method, [None, 60.0, 50.0], budget=8, task=make_task())
    first = requests[0]["messages"][-1]["content"]
    assert "class ModelNew_v0(nn.Module)" in first and "class ModelNew_v1" not in first
    founder = props[1].candidate_id  # trial 1 is the first correct program
    for island in method.database.islands:
        assert founder in {p.candidate_id for c in island.clusters.values() for p in c.programs}


def test_reset_only_on_the_sources_wall_clock_schedule():
    method = FunSearch(num_islands=4)
    resets: list[int] = []
    orig = ProgramDatabase.reset_weakest

    def spy(self, rng):
        resets.append(1)
        return orig(self, rng)

    ProgramDatabase.reset_weakest = spy
    try:
        drive(method, [float(90 - i) for i in range(45)], budget=45)
        assert resets == []  # 45 samples take far less than the source's 4 hours
        now = [0.0]
        method.clock = lambda: now[0]

        class Clock(FakeEvaluate):
            def __call__(self, p):
                now[0] += 3600.0  # each evaluation "takes" an hour
                return super().__call__(p)

        with ScriptedServer(lambda m, i: completion(i, 10.0 + i).replace("ModelNew_v9", "ModelNew")) as srv:
            list(method.optimize(seeded(make_task()), srv.model(), Clock(), Budget(evaluations=10)))
        assert len(resets) == 2  # after hour 5 and hour 10: every > 4 hours
        assert method.settings()["reset_period_s"] == 4 * 3600
    finally:
        ProgramDatabase.reset_weakest = orig


def test_clusters_sampled_with_replacement_from_a_softmax_and_sorted_by_score():
    db = ProgramDatabase(num_islands=1, programs_per_prompt=2, temperature=10.0)
    for j, rt in enumerate((40.0, 30.0, 20.0, 10.0)):
        db.register(0, sol(rt, trial=j))
    rng = random.Random(1)
    samples = [db.sample(rng)[1] for _ in range(300)]
    assert all(len(s) == 2 and score_of(s[0]) <= score_of(s[1]) for s in samples)
    assert any(s[0].trial == s[1].trial for s in samples)  # the same cluster twice: with replacement
    cold = ProgramDatabase(num_islands=1, programs_per_prompt=1, temperature=0.05)
    for j, rt in enumerate((100.0, 50.0, 10.0)):
        cold.register(0, sol(rt, j))
    picks = [cold.sample(rng)[1][0].runtime_us for _ in range(200)]
    assert picks.count(10.0) > 190
    assert db.cluster_temperature(db.islands[0]) == pytest.approx(10.0 * (1 - 4 / 30_000))


def test_programs_are_clustered_by_score_and_reset_refounds_the_weaker_half():
    db = ProgramDatabase(num_islands=2)
    assert not db.register(0, sol(None))
    db.register(0, sol(10.0, 1))
    db.register(0, sol(10.02, 2))  # within ~0.2%: same cluster
    db.register(0, sol(20.0, 3))
    assert sorted(len(c.programs) for c in db.islands[0].clusters.values()) == [1, 2]
    db = ProgramDatabase(num_islands=5)
    for i, rt in enumerate([50.0, 10.0, 40.0, 20.0, 30.0]):
        db.register(i, sol(rt, trial=i))
    reset = db.reset_weakest(random.Random(3))
    assert sorted(reset) == [0, 2]
    for i in reset:
        assert len(db.islands[i]) == 1 and db.islands[i].best.trial in {1, 3, 4}


def test_completions_are_read_like_the_sampler_reads_them():
    whole = ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    pass\n"
             "class ModelNew_v0(nn.Module):\n    pass\nclass ModelNew_v1(nn.Module):\n    X = 1\n")
    got = parse_completion(whole, 1)
    assert got.ok and "class ModelNew(nn.Module):\n    X = 1" in got.code
    assert "class Model(" not in got.code and "ModelNew_v0" not in got.code
    body = parse_completion("    def forward(self, x):\n        return x\n", 2)
    assert body.ok and "class ModelNew(nn.Module):\n    def forward" in body.code
    assert not parse_completion("no code here", 1).ok


@pytest.mark.slow
def test_harness_run_with_the_offline_model_completes_and_stores_results(tmp_path):
    from tests.methods.f2_scripted import assert_offline_run_stored, run_offline_cli

    proc, con = run_offline_cli("funsearch", tmp_path / "results")
    assert_offline_run_stored(proc, con, "funsearch", ["relu"], 3)
