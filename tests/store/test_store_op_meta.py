"""Schema v3: op metadata is stored with the run's ops; old stores migrate, and the
leaderboard falls back to the task file for ops stored without it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harness.store import OpMetadata, Results, RunSpec
from harness.store.export import export_run
from harness.store.schema import MIGRATIONS, SCHEMA_VERSION
from sandbox.intake.task import load_task
from sandbox.verdict import Measurement, Mode, Speedup, Status, Verdict

RELU = Path(__file__).resolve().parents[2] / "reference_ops" / "activation" / "relu.py"


def _v2_store(d: Path) -> None:
    """A store as harness versions before op metadata wrote it: schema v2, one op."""
    con = sqlite3.connect(d / "harness.sqlite")
    for script in MIGRATIONS[:2]:
        con.executescript(script)
    con.execute("PRAGMA user_version = 2")
    con.execute(
        "INSERT INTO runs (run_id, method, llm, budget_json, seed, device, created_at) "
        "VALUES ('old', 'm', 'offline', '{}', 0, 'cpu', 'now')"
    )
    con.execute("INSERT INTO run_ops (run_id, op, task_sha256) VALUES ('old', 'relu', 'sha')")
    con.commit()
    con.close()


def _meta(**kw) -> OpMetadata:
    base = dict(category="stored-category", description="from the store", dtype="float16",
                atol=1e-2, rtol=1e-2, flops="N", bytes="4*N", shapes={"small": {"N": 8}})  # fmt: skip
    return OpMetadata(**{**base, **kw})


def test_schema_version_counts_the_op_metadata_migration():
    assert SCHEMA_VERSION >= 3 and "meta_json" in MIGRATIONS[2]  # v4 (rule sets) came after


def test_v2_store_migrates_and_its_ops_gain_metadata_on_resume(tmp_path):
    _v2_store(tmp_path)
    repo = Results.open(tmp_path)
    assert repo.store.schema_version() == SCHEMA_VERSION
    assert repo.get_op("old", "relu").meta is None  # written before v3: read the task file
    m = _meta()
    assert repo.ensure_op("old", "relu", "sha", m).meta == m
    assert repo.ensure_op("old", "relu", "sha", _meta(category="other")).meta == m  # kept


def test_op_metadata_from_a_task_file_round_trips_and_is_exported(tmp_path):
    task = load_task(RELU)
    m = OpMetadata.from_task(task)
    assert (m.category, m.dtype, m.flops, m.bytes) == (
        task.meta.category, task.meta.dtype, task.meta.flops, task.meta.bytes)  # fmt: skip
    assert (m.atol, m.rtol, m.shapes, m.kernelbench) == (
        task.meta.atol, task.meta.rtol, task.shapes, task.kernelbench)  # fmt: skip
    repo = Results.open(tmp_path)
    repo.create_run(
        RunSpec(method="x", llm="offline", budget={}, environment={}, git_commit="", run_id="r")
    )
    repo.ensure_op("r", "relu", task.sha256, m)
    assert repo.get_op("r", "relu").meta == m
    assert repo.list_ops("r")[0].meta == m
    assert export_run(repo, "r")["ops"][0]["meta"]["category"] == task.meta.category


def _finished_op(repo: Results, run_id: str, op: str, meta: OpMetadata | None) -> None:
    repo.create_run(RunSpec(method="x", llm="offline", budget={}, environment={}, git_commit="",
                            run_id=run_id))  # fmt: skip
    repo.ensure_op(run_id, op, "sha", meta)
    cid = repo.add_candidate(run_id, op, trial=0, source="kernel")
    v = Verdict(
        status=Status.VALID, mode=Mode.FINAL, task=op,
        speedups={"eager": Speedup("eager", 2.0, 1.5, 2.5, 0.01, True)},
        timings={"candidate": Measurement(5.0, 4.0, 6.0, 10, True)},
    )  # fmt: skip
    repo.finish_op(
        run_id, op, best_candidate_id=cid, final_verdict_id=repo.add_verdict(v, candidate_id=cid)
    )


def test_leaderboard_reads_op_metadata_from_the_store_else_from_the_task_file(tmp_path):
    from harness.leaderboard.build import build_leaderboard
    from harness.leaderboard.collect import collect

    new, old = tmp_path / "new", tmp_path / "old"
    _finished_op(Results.open(new), "r", "relu", _meta())
    _finished_op(Results.open(old), "o", "softmax", None)  # as a store before v3 holds it
    lb = build_leaderboard(collect([new, old]), [str(new), str(old)])
    ops = {o.op: o for o in lb.ops}
    assert (ops["relu"].category, ops["relu"].dtype) == ("stored-category", "float16")
    assert ops["relu"].description == "from the store"
    assert ops["softmax"].category == "softmax" and ops["softmax"].description  # the task file's


def test_the_runner_stores_each_op_with_its_task_metadata(tmp_path):
    from harness.methods.base import Budget
    from harness.runner import RunConfig, run
    from tests.runner.test_runner import Judge

    run(RunConfig(method="evoengineer-free", ops=["relu"], budget=Budget(evaluations=1),
                  results=tmp_path, run_id="meta", progress=False), judge=Judge())  # fmt: skip
    stored = Results.open(tmp_path).get_op("meta", "relu").meta
    assert stored == OpMetadata.from_task(load_task(RELU))
