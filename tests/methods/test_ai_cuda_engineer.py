"""AI CUDA Engineer: stages, retries with LLM error summaries, top-5 prompts, ensemble, archive (RAG)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harness.llm.base import BudgetExhausted
from harness.methods.ai_cuda_engineer import AICudaEngineer, plan_budget
from harness.methods.archive import ArchiveEntry, InnovationArchive, load_from_store, tokenize
from harness.methods.base import Budget
from harness.store.schema import MIGRATIONS
from tests.methods.f2_scripted import FakeEvaluate, ScriptedLLM, kernel, task_context

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


def test_budget_split_scales_the_authors_45():
    p = plan_budget(45)
    assert (p.convert, p.translate, p.rag, p.per_generation) == (2, 10, 5, 4)
    small = plan_budget(3)
    assert small.convert == 0 and small.rag == 0 and small.translate == 3


def test_convert_is_judged_with_torch_ops_allowed_and_its_code_feeds_translate():
    def reply(call, i):
        if call.context.purpose == "convert":
            return kernel(50.0, name="functional", body="FUNCTIONAL_MARKER = 1")
        return kernel(20.0)

    llm = ScriptedLLM(reply)
    props, ev = run(AICudaEngineer(), llm, budget=10)
    assert props[0].operator == "convert" and props[0].allow_torch_ops
    assert all(not p.allow_torch_ops for p in props[1:])
    assert len(llm.by_purpose("convert")) == 1  # valid at once: no retry
    first_translate = llm.by_purpose("translate")[0]
    assert "FUNCTIONAL_MARKER" in first_translate.prompt
    assert "Rewrite `Model` in functional form" in llm.by_purpose("convert")[0].prompt


def test_translate_feeds_each_llm_error_summary_into_the_next_attempt():
    translate_replies = iter([kernel(fail="undefined symbol launch_relu"), kernel(fail="bad grid"),
                              kernel(12.0)])

    def reply(call, i):
        if call.context.purpose == "summarize-error":
            return f"SUMMARY{len(llm.by_purpose('summarize-error'))}: declare the kernel before use."
        if call.context.purpose == "translate":
            return next(translate_replies)
        return kernel(10.0)

    llm = ScriptedLLM(reply)
    props, _ = run(AICudaEngineer(convert_attempts=0), llm, budget=8)
    translates = llm.by_purpose("translate")
    summaries = llm.by_purpose("summarize-error")
    assert len(translates) == 3  # stops at the first valid kernel
    assert len(summaries) == 2  # one per failed attempt
    assert "undefined symbol launch_relu" in summaries[0].prompt  # the error is what gets summarised
    assert "SUMMARY1" in translates[1].prompt and "SUMMARY2" not in translates[1].prompt
    assert "SUMMARY1" in translates[2].prompt and "SUMMARY2" in translates[2].prompt
    assert "attempt 3 of" in translates[2].prompt


def test_translate_gives_up_after_ten_attempts_then_evolution_starts_from_scratch():
    def reply(call, i):
        if call.context.purpose == "summarize-error":
            return "it failed"
        return kernel(fail="never compiles")

    llm = ScriptedLLM(reply)
    props, _ = run(AICudaEngineer(convert_attempts=0), llm, budget=45)
    ops = [p.operator for p in props]
    assert ops[:10] == ["translate"] * 10 and "translate" not in ops[10:]
    assert set(ops[10:]) == {"init"}  # no valid kernel: evolution proposals have no parents
    assert len(props) == 45


def test_evolve_prompts_show_the_five_fastest_valid_kernels_with_speedups_and_profile():
    runtimes = iter([90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0] + [99.0] * 100)

    def reply(call, i):
        rt = next(runtimes)
        return kernel(rt, name=f"kern_at_{int(rt)}")

    llm = ScriptedLLM(reply)
    # translate succeeds at once; then generations of 4: the 2nd generation sees 5 kernels
    props, _ = run(AICudaEngineer(convert_attempts=0, per_generation=6), llm, budget=13)
    gen2 = [c for c in llm.calls if c.context.purpose in ("mutation", "crossover")][6]
    text = gen2.prompt
    shown = [n for n in ("kern_at_90", "kern_at_80", "kern_at_70", "kern_at_60", "kern_at_50",
                         "kern_at_40", "kern_at_30") if n in text]
    assert shown == ["kern_at_70", "kern_at_60", "kern_at_50", "kern_at_40", "kern_at_30"]
    assert text.index("kern_at_30") < text.index("kern_at_70")  # fastest first
    assert "3.33x vs PyTorch eager" in text  # 100 us eager / 30 us
    assert "Profile: kernels: kern_30.0=1" in text


def test_each_generation_mixes_mutation_and_crossover_across_the_model_ensemble():
    runtimes = iter(float(x) for x in range(90, 10, -1))
    llm = ScriptedLLM(lambda call, i: kernel(next(runtimes)), members=["model-a", "model-b"])
    props, _ = run(AICudaEngineer(convert_attempts=0, per_generation=4), llm, budget=9)
    evo = [c for c in llm.calls if c.context.purpose in ("mutation", "crossover", "init")]
    assert [c.model for c in evo] == ["model-a", "model-b"] * 4
    # generation 1 sees one valid kernel (mutation only); generation 2 sees several: crossover appears
    assert [c.context.purpose for c in evo[:4]] == ["mutation"] * 4
    assert [c.context.purpose for c in evo[4:]] == ["mutation", "crossover"] * 2
    cross = [p for p in props if p.operator == "crossover"]
    assert all(len(p.parent_ids) == 2 and len(set(p.parent_ids)) == 2 for p in cross)


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


def test_archive_grows_across_ops_and_feeds_rag_proposals():
    method = AICudaEngineer(convert_attempts=0)
    # op 1: softmax, solved
    llm1 = ScriptedLLM(lambda call, i: kernel(25.0, body="SOFTMAX_BEST = 1"))
    run(method, llm1, budget=9, task=task_context("softmax", SOFTMAX))
    run(method, ScriptedLLM(lambda call, i: kernel(5.0, body="RELU_BEST = 1")), budget=9,
        task=task_context("relu", RELU))
    assert {e.op for e in method.archive.entries()} == {"softmax", "relu"}
    # op 3: log_softmax retrieves softmax's best kernel first
    llm3 = ScriptedLLM(lambda call, i: kernel(30.0))
    props, _ = run(method, llm3, budget=45, task=task_context("log_softmax", LOG_SOFTMAX))
    rag = llm3.by_purpose("rag")
    assert len(rag) == 5 and sum(p.operator == "rag" for p in props) == 5
    text = rag[0].prompt
    assert "SOFTMAX_BEST" in text and text.index("SOFTMAX_BEST") < text.index("RELU_BEST")


def test_budget_is_never_exceeded_and_archive_is_kept_when_the_harness_stops_the_op():
    method = AICudaEngineer()
    props, ev = run(method, ScriptedLLM(lambda call, i: kernel(10.0)), budget=17)
    assert len(props) == len(ev.proposals) == 17
    llm = ScriptedLLM(lambda call, i: kernel(7.0))
    with pytest.raises(BudgetExhausted):
        run(method, llm, budget=45, evaluate=FakeEvaluate(limit=6), task=task_context("gelu"))
    assert "gelu" in {e.op for e in method.archive.entries()}


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
    from sandbox.task import load_task

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


def test_rag_is_skipped_when_no_archived_op_shares_anything_with_this_one():
    method = AICudaEngineer(convert_attempts=0)
    method.archive.add(ArchiveEntry("matmul", MATMUL, "MATMUL_KERNEL", 3.0))
    llm = ScriptedLLM(lambda call, i: kernel(10.0))
    props, _ = run(method, llm, budget=45, task=task_context("other", "def zz(q):\n    return qq\n"))
    assert llm.by_purpose("rag") == [] and len(props) == 45  # its share went to evolution
