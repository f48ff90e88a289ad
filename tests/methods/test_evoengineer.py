"""EvoEngineer's logic, driven by a scripted LLM over real HTTP and a fake evaluate():
what each variant puts in its prompts (I1/I2/I3), which operators and parents it picks,
what its population holds after each step, and how malformed replies count."""

from __future__ import annotations

import pytest

from harness.methods.base import Budget, TaskContext
from harness.methods.evoengineer import EvoEngineerFree, EvoEngineerFull, EvoEngineerInsight
from harness.methods.prompting import default_rules
from harness.methods.registry import get_method
from tests.methods.scripted_llm import FakeEvaluate, ScriptedServer, reply

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
    """steps: list of (thought, runtime or None) or the string 'garbage'."""
    def responder(messages, i):
        step = steps[i % len(steps)]
        if step == "garbage":
            return "Sorry, I cannot write this kernel."
        thought, rt = step
        return reply(f"k{i}", thought, f"T{i}", rt)
    return responder


def drive(method, steps, budget):
    ev = FakeEvaluate(eager_us=100.0)
    snaps = []
    method.on_step = lambda trial, snap: snaps.append(snap)
    with ScriptedServer(script(steps)) as srv:
        props = list(method.optimize(make_task(), srv.model(), ev, Budget(evaluations=budget)))
        prompts = srv.prompts()
    return props, prompts, snaps, ev


def assert_i1(prompt: str) -> None:
    assert "REFERENCE_MARKER" in prompt  # reference source
    assert "TARGET_MARKER" in prompt  # target hardware
    assert "load_inline" in prompt  # toolchain
    assert "no PyTorch compute fallback" in prompt and "Keep the precision" in prompt
    assert "## Name" in prompt and "## Thought" in prompt and "## Code" in prompt  # reply format


def test_alias_evoengineer_is_full():
    assert get_method("evoengineer").name == "evoengineer-full"


def test_free_prompts_carry_only_task_context_and_improve_the_current_best():
    steps = [("idea a", 50.0), ("idea b", 60.0), ("idea c", 40.0), ("idea d", None)]
    props, prompts, snaps, _ = drive(EvoEngineerFree(), steps, budget=4)
    assert len(prompts) == 4 and len(props) == 4
    for p in prompts:
        assert_i1(p)
        assert "Measured:" not in p  # no runtimes (I2) ...
        assert "insights" not in p.lower()  # ... no insights (I3)
        assert "Parent solutions" not in p
        assert "Write an improved version of the current best" in p
    assert "the PyTorch reference above is the current best" in prompts[0]
    assert "PyTorch eager" not in prompts[1]
    assert "TAG=T0" in prompts[1] and "TAG=T0" in prompts[2]  # 60 us did not replace 50 us
    assert "TAG=T2" in prompts[3]  # 40 us did
    assert [s["best"] for s in snaps] == [1000, 1000, 1002, 1002]
    assert all(len(s["members"]) <= 1 for s in snaps)
    assert {p.operator for p in props} == {"improve"}


def test_insight_prompts_carry_best_runtime_profile_and_up_to_three_valid_insights():
    steps = [("insight-one", None), ("insight-two", 50.0), ("insight-three", 40.0),
             ("insight-four", 45.0), ("insight-five", 30.0), ("insight-six", 35.0), ("insight-seven", 33.0)]
    props, prompts, snaps, _ = drive(EvoEngineerInsight(), steps, budget=7)
    for p in prompts:
        assert_i1(p)
        assert "Parent solutions" not in p  # no I2
    # seed: the reference is the best; once a verdict measured eager, its time is shown
    assert "the PyTorch reference above is the current best" in prompts[1]
    assert "(PyTorch eager: 100.0 us)" in prompts[1]
    assert "insight-one" not in "".join(prompts)  # the thought of an incorrect kernel is no insight
    assert "Measured: valid, 50.0 us" in prompts[2] and "Profile summary: kernels: my_kernel=1" in prompts[2]
    assert "- insight-two" in prompts[2]
    assert "Measured: valid, 40.0 us" in prompts[4]  # 45 us did not replace 40 us
    valid_thoughts = {"insight-two", "insight-three", "insight-four", "insight-five", "insight-six"}
    for snap, prompt in zip(snaps, prompts, strict=True):
        shown = snap["insights_shown"]
        assert len(shown) <= 3 and len(set(shown)) == len(shown)
        assert set(shown) <= valid_thoughts
        for s in shown:
            assert f"- {s}" in prompt
    assert len(snaps[6]["insights_shown"]) == 3  # 5 valid insights in the pool, 3 sampled
    assert [s["best"] for s in snaps][-1] == 1004  # 30 us


def test_full_operators_parents_and_population_after_each_step():
    steps = [("a", 50.0), ("b", None), ("c", 40.0), ("d", 30.0), "garbage", ("f", 20.0),
             ("g", 60.0), ("h", 70.0), ("i", 10.0)]
    props, prompts, snaps, ev = drive(EvoEngineerFull(), steps, budget=9)
    ops = [p.operator for p in props]
    # init until two valid members, then mutation and crossover alternate
    assert ops == ["init", "init", "init", "mutation", "crossover", "mutation", "crossover",
                   "mutation", "crossover"]
    assert "Write a new `ModelNew`" in prompts[0] and "Parent solutions" not in prompts[0]
    assert "Modify Parent 1" in prompts[3] and "Combine the strengths of Parent 1 and Parent 2" in prompts[4]
    # population after each step: best valid first, invalid only while slots remain
    assert snaps[0]["members"] == [1000]
    assert snaps[1]["members"] == [1000, 1001]  # the incorrect one tops up a free slot
    assert snaps[2]["members"] == [1002, 1000, 1001]
    assert snaps[3]["members"] == [1003, 1002, 1000, 1001]
    assert snaps[4]["members"] == [1003, 1002, 1000, 1001]  # unparsable reply: not a member
    assert snaps[5]["members"] == [1005, 1003, 1002, 1000, 1001]
    assert snaps[6]["members"] == [1005, 1003, 1002, 1000, 1006]  # 5 valid: the invalid one is out
    assert snaps[7]["members"] == [1005, 1003, 1002, 1000, 1006]  # 70 us is not elite
    assert snaps[8]["members"] == [1008, 1005, 1003, 1002, 1000]
    # parents come from the population of the step before, with their runtimes in the prompt (I2)
    for t in range(3, 9):
        before = set(snaps[t - 1]["members"])
        parents = snaps[t]["parents"]
        assert len(parents) == (1 if ops[t] == "mutation" else 2)
        assert set(parents) <= before and len(set(parents)) == len(parents)
        assert props[t].parent_ids == parents
        for pid in parents:
            tag = f"TAG=T{pid - 1000}"
            assert tag in prompts[t]
        assert "Measured: valid," in prompts[t]
    # I3: insights from valid solutions only, at most 3
    for snap in snaps:
        assert len(snap["insights_shown"]) <= 3
        assert "b" not in snap["insights_shown"]
    assert props[4].parse_error and props[4].verdict is not None  # still judged (counted)
    assert len(ev.proposals) == 9


def test_malformed_reply_is_a_failed_trial_that_counts():
    props, prompts, snaps, ev = drive(EvoEngineerFree(), ["garbage", ("ok", 10.0)], budget=2)
    assert props[0].parse_error == "no fenced code block in the reply"
    assert props[0].source == "" and props[0].verdict.status.value == "compile_error"
    assert len(ev.proposals) == 2 and snaps[0]["members"] == []


def test_same_seed_same_choices():
    steps = [("a", 50.0), ("b", 45.0), ("c", 40.0), ("d", 30.0), ("e", 20.0), ("f", 25.0),
             ("g", 60.0), ("h", 15.0)]
    runs = [drive(EvoEngineerFull(), steps, budget=8)[2] for _ in range(2)]
    assert [s["parents"] for s in runs[0]] == [s["parents"] for s in runs[1]]
    assert [s["insights_shown"] for s in runs[0]] == [s["insights_shown"] for s in runs[1]]


def test_unknown_variant_is_refused():
    from harness.methods.evoengineer import EvoEngineer

    with pytest.raises(ValueError, match="variant"):
        EvoEngineer(variant="fast")


def test_cuda_task_prompts_name_the_gpu_and_the_cuda_toolchain():
    from harness.methods.prompting import messages
    from harness.runner.tasks import hardware_text

    hw = hardware_text("cuda", {"gpu": "NVIDIA H200", "compute_capability": "9.0", "cuda": "13.0", "torch": "2.11"})
    task = TaskContext(op="relu", reference_source=REFERENCE, signature="forward(self, x)", device="cuda",
                       hardware=hw, language="cuda", rules=default_rules("cuda"))
    system, user_msg = messages(task, "evoengineer/user.j2", operator="init", best=None, parents=[], insights=[],
                            show_best_measurement=True, seed_runtime_us=None)
    user = user_msg["content"]
    assert "NVIDIA H200" in user and "sm_90" in user and "CUDA 13.0" in user
    assert "CUDA C++ compiled through torch.utils.cpp_extension.load_inline" in user
    assert "own CUDA kernel" in user and "CUDA kernels" in system["content"]
