"""EvoEngineer against its source (evotoolkit evoengineer.py and the cuda_engineering
EvoEngineer{Free,Insight,Full} interfaces), driven by a scripted model behind the real loopback
OpenAI server and the method-logic evaluate() boundary (verdicts from markers in the source):
what each variant's prompts hold, the seed kernel as the first current best, generations of
4 that see one population snapshot, parents from valid members only, insights from the
population, and malformed replies as counted trials."""

from __future__ import annotations

import random
import re

import pytest

from harness.methods.base import Budget, TaskContext
from harness.methods.common import Solution
from harness.methods.evoengineer import (
    EvoEngineer,
    EvoEngineerFree,
    EvoEngineerFull,
    EvoEngineerInsight,
)
from harness.methods.prompting import default_rules
from harness.methods.registry import get_method
from tests.methods.scripted_llm import FakeEvaluate, ScriptedServer, reply, seeded

REFERENCE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)  # REFERENCE_MARKER
'''


def make_task(seed: int = 0) -> TaskContext:
    return TaskContext(op="relu", reference_source=REFERENCE, signature="forward(self, x)",
                       device="cpu", hardware="CPU only (x86_64, 2 cores) TARGET_MARKER",
                       language="cpp", rules=default_rules("cpu"), seed=seed)


def script(steps):
    """steps: (thought, runtime or None) per call, or 'garbage' for a reply without code."""
    def responder(messages, i):
        step = steps[i % len(steps)]
        if step == "garbage":
            return "Sorry, I cannot write this kernel."
        thought, rt = step
        return reply(f"k{i}", thought, f"T{i}", rt)
    return responder


def drive(method, steps, budget, task=None):
    ev = FakeEvaluate(eager_us=100.0)
    snaps = []
    method.on_step = lambda trial, snap: snaps.append(snap)
    with ScriptedServer(script(steps)) as srv:
        props = list(method.optimize(task or seeded(make_task()), srv.model(), ev,
                                     Budget(evaluations=budget)))
        prompts = srv.prompts()
    return props, prompts, snaps, ev


def tags(prompt: str) -> list[str]:
    return re.findall(r"TAG=(\w+)", prompt)


def assert_task_context(prompt: str) -> None:
    assert "REFERENCE_MARKER" in prompt and "TARGET_MARKER" in prompt and "load_inline" in prompt
    assert "no PyTorch compute fallback" in prompt and "Keep the precision" in prompt


def assert_i1(prompt: str) -> None:
    """I1 task context and the Name / Thought / Code reply format."""
    assert_task_context(prompt)
    assert "## Name" in prompt and "## Thought" in prompt and "## Code" in prompt


def test_alias_evoengineer_is_full():
    assert get_method("evoengineer").name == "evoengineer-full"


def test_free_shows_the_current_best_code_only_and_the_seed_is_the_first_best():
    steps = [("a", 50.0), ("b", None), ("c", 40.0), ("d", 60.0), ("e", 30.0), ("f", 70.0)]
    props, prompts, snaps, _ = drive(EvoEngineerFree(), steps, budget=9)
    assert len(prompts) == 9 and {p.operator for p in props} == {"init"}
    for p in prompts:
        assert_task_context(p)
        for absent in ("Runtime:", "Current approach", "insight", "Parent", "## Thought", "Measured"):
            assert absent not in p
        assert "Reply with the code only" in p
    # generation 0 (trials 0-3) sees the seed even after trial 2 found 40 us; generation 1 sees T2
    assert [tags(p) for p in prompts[:4]] == [["SEED"]] * 4
    assert [tags(p) for p in prompts[4:8]] == [["T2"]] * 4
    assert [s["generation"] for s in snaps] == [0] * 4 + [1] * 4 + [2]
    assert snaps[0]["best"] == 999  # the seed kernel's candidate id


def test_insight_shows_best_runtime_approach_profile_and_insights_from_the_population():
    steps = [(f"thought-{i}", None if i in (1, 5) else 90.0 - i) for i in range(12)]
    props, prompts, snaps, _ = drive(EvoEngineerInsight(), steps, budget=12)
    assert "Current approach: one thread per element" in prompts[0]  # the seed's approach
    assert "Runtime: valid, 80.0 us" in prompts[0] and "Performance profile: kernels: my_kernel=1" in prompts[0]
    assert "Name: seed_kernel" in prompts[0] and "## Thought" in prompts[0]
    assert "- one thread per element" in prompts[0]  # the only thought in the population
    for snap, prompt in zip(snaps, prompts, strict=True):
        shown = snap["insights_shown"]
        assert len(shown) == min(3, len(snap["thought_pool"])) and len(set(shown)) == len(shown)
        assert set(shown) <= set(snap["thought_pool"])  # from the population of the generation
        for s in shown:
            assert f"- {s}" in prompt
    # thoughts of trials evaluated during a generation reach prompts only in the next one
    assert all("thought-" not in p for p in prompts[:4])
    pool_gen1 = snaps[4]["thought_pool"]
    assert "thought-1" in pool_gen1  # an invalid member tops up the population: its thought is in
    assert len(pool_gen1) == 5


def test_full_initialises_until_two_valid_then_crossover_and_mutation_from_valid_parents_only():
    steps = [("a", None), ("b", None), ("c", None), ("d", None),  # gen 0: nothing valid beside the seed
             ("e", 50.0), ("f", None), ("g", None), ("h", None),  # gen 1: init again; now 2 valid
             *[(f"x{i}", None if i % 3 == 0 else 40.0 - i) for i in range(16)]]
    props, prompts, snaps, ev = drive(EvoEngineerFull(), steps, budget=20)
    ops = [p.operator for p in props]
    assert ops[:8] == ["init"] * 8
    assert ops[8:16] == ["crossover", "crossover", "mutation", "mutation"] * 2
    invalid = {p.candidate_id for p in ev.proposals if not p.verdict.valid}
    for t in range(8, 20):
        snap = snaps[t]
        assert len(snap["parents"]) == (2 if ops[t] == "crossover" else 1)
        assert set(snap["parents"]) <= set(snap["eligible"])  # valid members of the snapshot
        assert not set(snap["parents"]) & invalid
    assert set(snaps[8]["members"]) & invalid  # ... although the population then held invalid ones
    cross = prompts[8]
    assert "# Parents to combine" in cross and cross.count("Parent approach:") == 2
    assert "Current best solution" in cross and "# Optimization insights" in cross
    assert "# Source to mutate" in prompts[10] and "Target approach:" in prompts[10]
    assert "## Name" in cross and "## Thought" in cross and "## Code" in cross


def test_parents_are_drawn_with_replacement_by_rank_weight_among_valid_members():
    members = [Solution(code=f"c{i}", runtime_us=10.0 * (i + 1), valid=True, trial=i, candidate_id=i)
               for i in range(4)]
    members.append(Solution(code="bad", valid=False, trial=9, candidate_id=9))
    m, rng = EvoEngineer(), random.Random(0)
    draws = [m.select(members, 2, rng) for _ in range(3000)]
    flat = [p.candidate_id for pair in draws for p in pair]
    assert 9 not in flat
    assert any(a.candidate_id == b.candidate_id for a, b in draws)  # with replacement
    w = [1 / (i + 4) for i in range(4)]  # evotoolkit: 1 / (i + n), i from 0, n valid members
    for i in range(4):
        assert abs(flat.count(i) / len(flat) - w[i] / sum(w)) < 0.03
    assert m.select([members[-1]], 1, rng)[0].candidate_id == 9  # no valid member: source fallback


def test_without_a_seed_the_reference_is_the_baseline_and_malformed_replies_count():
    props, prompts, snaps, ev = drive(EvoEngineerFree(), ["garbage", ("ok", 10.0)], budget=2,
                                      task=make_task())
    assert "the PyTorch reference above is the baseline" in prompts[0]
    assert props[0].parse_error == "no fenced code block in the reply"
    assert props[0].verdict.status.value == "compile_error" and len(ev.proposals) == 2


def test_same_seed_same_choices_and_settings_are_recorded():
    steps = [(f"t{i}", 60.0 - i) for i in range(12)]
    runs = [drive(EvoEngineerFull(), steps, budget=12)[2] for _ in range(2)]
    assert [s["parents"] for s in runs[0]] == [s["parents"] for s in runs[1]]
    assert [s["insights_shown"] for s in runs[0]] == [s["insights_shown"] for s in runs[1]]
    s = EvoEngineerFull().settings(Budget(45))
    assert (s["variant"], s["population"], s["insights"], s["samplers"], s["protocol"]) == ("full", 5, 3, 4, "paper")
    with pytest.raises(ValueError, match="protocol"):
        EvoEngineerFull(protocol="harness")
    with pytest.raises(ValueError, match="variant"):
        EvoEngineer(variant="fast")


def test_cuda_task_prompts_name_the_gpu_and_the_cuda_toolchain():
    from harness.methods.prompting import messages
    from harness.runner.tasks import hardware_text

    hw = hardware_text("cuda", {"gpu": "NVIDIA H200", "compute_capability": "9.0", "cuda": "13.0", "torch": "2.11"})
    task = TaskContext(op="relu", reference_source=REFERENCE, signature="forward(self, x)", device="cuda",
                       hardware=hw, language="cuda", rules=default_rules("cuda"))
    system, user_msg = messages(task, "evoengineer/init.j2", best=None, parents=[], insights=[],
                                seed_runtime_us=None)
    user = user_msg["content"]
    assert "NVIDIA H200" in user and "sm_90" in user and "CUDA 13.0" in user
    assert "CUDA C++ compiled through torch.utils.cpp_extension.load_inline" in user
    assert "own CUDA kernel" in user and "CUDA kernels" in system["content"]
