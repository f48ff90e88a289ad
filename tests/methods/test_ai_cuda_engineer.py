"""AI CUDA Engineer: stages, retries with LLM error summaries, top-5 prompts, ensemble, archive (RAG)."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from pathlib import Path

import pytest

from harness.llm.base import BudgetExhausted
from harness.methods.ai_cuda_engineer import AICudaEngineer, plan_budget
from harness.methods.archive import ArchiveEntry, InnovationArchive, load_from_store, tokenize
from harness.methods.base import Budget
from harness.store.schema import MIGRATIONS
from tests.methods.f2_scripted import FakeEvaluate, ScriptedLLM, kernel, task_context
from tests.methods.scripted_llm import ScriptedServer

SOFTMAX = ("def module_fn(x):\n    m = torch.max(x, dim=1, keepdim=True).values\n"
           "    e = torch.exp(x - m)\n    return e / torch.sum(e, dim=1, keepdim=True)\n")
LOG_SOFTMAX = ("def module_fn(x):\n    m = torch.max(x, dim=1, keepdim=True).values\n"
               "    e = torch.exp(x - m)\n    return x - m - torch.log(torch.sum(e, dim=1, keepdim=True))\n")
RELU = "def module_fn(x):\n    return torch.clamp(x, min=0)\n"
MATMUL = "def module_fn(a, b):\n    return torch.matmul(a, b)\n"


def run(method, llm, budget=45, evaluate=None, task=None):
    evaluate = evaluate or FakeEvaluate()
    props = list(method.optimize(task or task_context(), llm, evaluate, Budget(evaluations=budget)))
    return props, evaluate


def stage_of(messages) -> str:
    """Which stage a request to the scripted server belongs to (its last user turn says)."""
    last = messages[-1]["content"]
    for marker, stage in (("summary of this error", "summary"), ("stage 1: convert", "convert"),
                          ("functional code above does not work", "convert"),
                          ("stage 2: translate", "translate"), ("provide the CORRECT kernel", "translate"),
                          ("stage 3: evolutionary", "evolve"), ("stage 4: innovation", "rag"),
                          ("(composition)", "compose")):
        if marker in last:
            return stage
    raise AssertionError(f"unknown stage: {last[-300:]}")


def serve(method, plan, budget, task=None):
    """Drive ``method`` through the real loopback server; ``plan(stage, n, messages)`` returns the
    reply to the n-th request of that stage. Returns (proposals, requests, evaluate)."""
    counts: dict[str, int] = {}

    def responder(messages, i):
        st = stage_of(messages)
        counts[st] = counts.get(st, 0) + 1
        return plan(st, counts[st] - 1, messages)

    ev = FakeEvaluate()
    with ScriptedServer(responder) as srv:
        props = list(method.optimize(task or task_context(), srv.model(), ev, Budget(evaluations=budget)))
        return props, srv.requests, ev


def ok(tag="K", rt=10.0, thought="an idea"):
    return kernel(rt, name=f"k_{tag}", thought=thought, body=f"TAG_{tag} = 1")


def test_each_stage_has_its_own_budget_at_the_source_scale():
    assert AICudaEngineer().default_budget == 68  # 10 + 10 + 10 x 4 + 5 + 3
    p = plan_budget(68, has_parts=False)
    assert (p.convert, p.translate, p.evolve, p.per_generation, p.rag, p.compose) == (10, 10, 40, 4, 5, 0)
    scaled = plan_budget(45, has_parts=False)
    assert scaled.scaled and (scaled.convert, scaled.translate, scaled.rag) == (7, 7, 3)
    assert plan_budget(3).convert == 0 and plan_budget(3).translate == 1

    def plan(stage, n, messages):
        if stage == "summary":
            return "declare the kernel before use"
        if stage == "translate" and n < 2:
            return kernel(fail="undefined symbol")
        return ok(f"{stage}{n}", 50.0 - n)

    props, requests, ev = serve(AICudaEngineer(), plan, budget=68)
    stages = [p.stage for p in props]
    assert stages == ["convert"] + ["translate"] * 3 + ["evolve"] * 40 + ["rag"] * 5
    assert len(ev.proposals) == 49  # what convert and translate left is not given to evolution
    assert sum(stage_of(r["messages"]) == "summary" for r in requests) == 2
    assert props[0].allow_torch_ops and not any(p.allow_torch_ops for p in props[1:])


def test_translate_retries_show_the_failed_code_and_its_summary_and_every_third_starts_afresh():
    def plan(stage, n, messages):
        if stage == "summary":
            return f"SUMMARY{n}: the launch is wrong"
        if stage == "translate":
            return kernel(fail=f"bad grid {n}", body=f"FAILED_{n} = 1") if n < 4 else ok("T")
        return ok(stage)

    props, requests, _ = serve(AICudaEngineer(convert_attempts=0, generations=1, rag_proposals=0), plan, budget=20)
    tr = [r["messages"] for r in requests if stage_of(r["messages"]) == "translate"]
    sm = [r["messages"] for r in requests if stage_of(r["messages"]) == "summary"]
    assert len(tr) == 5 and len(sm) == 3  # no summary after the 3rd failure: the 4th starts afresh
    assert [len(m) for m in tr] == [2, 4, 4, 2, 4]
    assert tr[1][2]["role"] == "assistant" and "FAILED_0" in tr[1][2]["content"]
    assert "SUMMARY0" in tr[1][3]["content"] and "CORRECT kernel" in tr[1][3]["content"]
    assert "FAILED_1" in tr[2][2]["content"] and "SUMMARY1" in tr[2][3]["content"]
    assert "bad grid 0" in sm[0][-1]["content"] and "FAILED_0" in sm[0][2]["content"]
    assert "FAILED_3" in tr[4][2]["content"]


def test_evolution_prompts_show_the_top5_slowest_first_with_thoughts_and_the_best_to_optimize():
    rts = iter([90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0] + [99.0] * 40)

    def plan(stage, n, messages):
        rt = next(rts)
        return ok(f"at{int(rt)}", rt, thought=f"thought at {int(rt)}")

    props, requests, _ = serve(AICudaEngineer(convert_attempts=0, per_generation=6), plan, budget=13)
    evo = [r["messages"][-1]["content"] for r in requests if stage_of(r["messages"]) == "evolve"]
    gen2 = evo[6]
    listed = re.findall(r"name: k_at(\d+)", gen2)
    assert listed == ["70", "60", "50", "40", "30"]  # the 5 fastest, slowest first
    assert "thought: thought at 30" in gen2 and "3.33x vs PyTorch eager" in gen2
    assert "kernel you need to optimize (k_at30)" in gen2 and "Profile of this kernel: kernels: kern_30.0=1" in gen2
    assert "Combine the best ideas of Proposal" in evo[7]  # every second proposal: crossover


def test_rag_runs_with_an_empty_archive_and_the_archive_persists_across_runs(tmp_path):
    path = tmp_path / "archive.json"
    first = AICudaEngineer(convert_attempts=0, archive_path=str(path))
    props, requests, _ = serve(first, lambda st, n, m: ok(f"relu{st}{n}", 5.0, thought="vectorised loads"),
                               budget=10, task=task_context("relu", RELU))
    rag = [r["messages"][-1]["content"] for r in requests if stage_of(r["messages"]) == "rag"]
    assert len(rag) == 1 and "The archive holds no other operator yet" in rag[0]
    assert json.loads(path.read_text())["entries"][0]["op"] == "relu"
    second = AICudaEngineer(convert_attempts=0, archive_path=str(path))  # a later run
    assert second.settings()["archive_entries_at_start"] == 1
    props, requests, _ = serve(second, lambda st, n, m: ok(f"sm{n}", 9.0), budget=10,
                               task=task_context("softmax", SOFTMAX))
    rag = [r["messages"][-1]["content"] for r in requests if stage_of(r["messages"]) == "rag"]
    assert "Example 1: `relu`" in rag[0] and "TAG_relu" in rag[0] and "thought: vectorised loads" in rag[0]
    assert {e["op"] for e in json.loads(path.read_text())["entries"]} == {"relu", "softmax"}


def test_composition_fuses_the_best_kernels_of_the_parts_found_in_the_archive():
    method = AICudaEngineer(convert_attempts=0)
    method.archive.add(ArchiveEntry("relu", RELU, "RELU_PART_KERNEL", 2.0, name="relu_fast",
                                    thought="one pass"))
    fused = dataclasses.replace(task_context("gemm_bias_relu"),
                                extras={"parts": ["matmul_rect", "relu"]})
    props, requests, _ = serve(method, lambda st, n, m: ok(f"{st}{n}", 50.0 - n), budget=68, task=fused)
    comp = [r["messages"][-1]["content"] for r in requests if stage_of(r["messages"]) == "compose"]
    assert len(comp) == 3 and [p.stage for p in props][-3:] == ["compose"] * 3
    assert "Part 1: `matmul_rect`" in comp[0] and "No kernel yet" in comp[0]
    assert "Part 2: `relu`" in comp[0] and "RELU_PART_KERNEL" in comp[0] and "2.00x" in comp[0]
    alone = AICudaEngineer(convert_attempts=0)  # no part in the archive: nothing to compose
    props, requests, _ = serve(alone, lambda st, n, m: ok(f"{st}{n}"), budget=68, task=fused)
    assert not any(stage_of(r["messages"]) == "compose" for r in requests)
    parts = {"gemm_bias_relu": ["matmul_rect", "relu"]}
    assert method.op_waves(["gemm_bias_relu", "relu", "softmax"], parts) == [["relu", "softmax"], ["gemm_bias_relu"]]


def test_a_seed_kernel_is_the_translated_kernel():
    from tests.methods.scripted_llm import seeded

    task = seeded(task_context())
    props, requests, _ = serve(AICudaEngineer(convert_attempts=0), lambda st, n, m: ok(f"{st}{n}"), budget=6,
                               task=task)
    assert not any(stage_of(r["messages"]) == "translate" for r in requests)
    first_evo = next(r["messages"][-1]["content"] for r in requests if stage_of(r["messages"]) == "evolve")
    assert "TAG=SEED" in first_evo and "kernel you need to optimize (seed_kernel)" in first_evo


def test_retrieval_picks_the_most_similar_solved_op():
    archive = InnovationArchive([
        ArchiveEntry("relu", RELU, "RELU_KERNEL", 2.0),
        ArchiveEntry("softmax", SOFTMAX, "SOFTMAX_KERNEL", 1.5),
        ArchiveEntry("matmul", MATMUL, "MATMUL_KERNEL", 3.0),
    ])
    hits = archive.similar(LOG_SOFTMAX, k=2)
    assert hits[0][0].op == "softmax"
    assert hits[0][1] > 0.5 > hits[1][1]
    assert [e.op for e, _ in archive.similar(MATMUL, k=3, exclude_op="matmul")] != []
    assert "matmul" not in [e.op for e, _ in archive.similar(MATMUL, k=3, exclude_op="matmul")]
    assert tokenize("blockDim.x * max_val") == ["block", "dim", "max", "val"]


def test_archive_loads_best_kernels_of_earlier_runs_from_a_store(tmp_path):
    db = tmp_path / "harness.sqlite"
    con = sqlite3.connect(db)
    for script in MIGRATIONS:
        con.executescript(script)

    def add(cid, op, source, operator, status, runtime, speedup, torch_ops=False):
        con.execute("INSERT INTO candidates (candidate_id, run_id, op, trial, source, source_sha256, operator,"
                    " created_at) VALUES (?, 'r1', ?, ?, ?, 'x', ?, 'now')", (cid, op, cid, source, operator))
        con.execute("INSERT INTO verdicts (candidate_id, run_id, op, mode, status, runtime_us, speedup_eager,"
                    " verdict_json, created_at) VALUES (?, 'r1', ?, 'feedback', ?, ?, ?, ?, 'now')",
                    (cid, op, status, runtime, speedup, json.dumps({"allow_torch_ops": torch_ops})))

    add(1, "softmax", SOFTMAX, "convert", "valid", 50.0, 1.0, torch_ops=True)
    add(2, "softmax", "SLOW", "mutation", "valid", 40.0, 1.2)
    add(3, "softmax", "FAST", "mutation", "valid", 20.0, 2.5)
    add(4, "softmax", "BROKEN", "mutation", "compile_error", None, None)
    add(5, "relu", "RELU_K", "translate", "valid", 5.0, 3.0)
    con.commit()
    con.close()
    entries = {e.op: e for e in load_from_store(tmp_path)}
    assert entries["softmax"].kernel == "FAST" and entries["softmax"].functional_code == SOFTMAX
    assert entries["relu"].kernel == "RELU_K" and entries["relu"].source == "store:r1"
    method = AICudaEngineer(archive_from=str(db))
    assert {e.op for e in method.archive.entries()} == {"softmax", "relu"}


@pytest.mark.slow
def test_harness_run_with_the_offline_model_completes_and_stores_results(tmp_path):
    from tests.methods.f2_scripted import assert_offline_run_stored, run_offline_cli

    proc, con = run_offline_cli("ai-cuda-engineer", tmp_path / "results")
    assert_offline_run_stored(proc, con, "ai-cuda-engineer", ["relu"], 3)


FUNCTIONAL_RELU = """import torch
import torch.nn as nn
import torch.nn.functional as F


def module_fn(x):
    return F.relu(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return module_fn(x)
"""


@pytest.mark.slow
def test_convert_stage_is_judged_by_the_real_evaluator_with_torch_ops_allowed():
    from harness.methods.reply import format_reply
    from sandbox.evaluate import EvalConfig, evaluate
    from sandbox.intake.task import load_task

    task = load_task(Path(__file__).resolve().parents[2] / "reference_ops" / "activation" / "relu.py")
    verdicts = []

    def real_evaluate(p):
        if verdicts:  # one evaluation is enough: stop the op like the harness does
            raise BudgetExhausted("test stops after the convert stage")
        cfg = EvalConfig(device="cpu", profile="small", allow_torch_ops=p.allow_torch_ops, max_timing_s=1.0)
        p.verdict = evaluate(task, p.source, cfg)
        verdicts.append(p.verdict)
        return p.verdict

    llm = ScriptedLLM(lambda call, i: format_reply("functional_relu", "F.relu", FUNCTIONAL_RELU))
    with pytest.raises(BudgetExhausted):
        list(AICudaEngineer().optimize(task_context("relu", task.source), llm, real_evaluate, Budget(evaluations=4)))
    assert verdicts[0].valid and verdicts[0].allow_torch_ops, verdicts[0].message
    # the same functional rewrite as a kernel candidate is rejected: torch does the work
    strict = evaluate(task, FUNCTIONAL_RELU, EvalConfig(device="cpu", profile="small", max_timing_s=1.0))
    assert not strict.valid




def test_budget_is_never_exceeded_and_the_archive_keeps_an_op_the_harness_stopped():
    method = AICudaEngineer()
    props, ev = run(method, ScriptedLLM(lambda call, i: kernel(10.0)), budget=17)
    assert len(props) == len(ev.proposals) == 17
    with pytest.raises(BudgetExhausted):
        run(method, ScriptedLLM(lambda call, i: kernel(7.0)), budget=45, evaluate=FakeEvaluate(limit=6),
            task=task_context("gelu"))
    assert "gelu" in {e.op for e in method.archive.entries()}
