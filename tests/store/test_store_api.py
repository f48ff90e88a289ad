"""The store API: run/op lifecycle, idempotent resume writes, verdict reuse, migrations."""

from __future__ import annotations

import sqlite3

import pytest

from harness.store import Results, RunSpec, Store, StoreError, config_key, sha256_text
from harness.store.schema import MIGRATIONS, SCHEMA_VERSION
from sandbox.evaluate import EvalConfig
from sandbox.verdict import Measurement, Mode, Speedup, Status, Verdict


def spec(**kw):
    base = dict(
        method="best-of-n",
        llm="offline",
        budget={"evaluations": 2},
        environment={"gpu": "X"},
        git_commit="abc123",
    )
    base.update(kw)
    return RunSpec(**base)


def valid_verdict(speedup=2.0, mode=Mode.FEEDBACK):
    return Verdict(
        status=Status.VALID,
        mode=mode,
        task="relu",
        timings={"candidate": Measurement(10.0, 9.0, 11.0, 50, True)},
        speedups={"eager": Speedup("eager", speedup, speedup * 0.9, speedup * 1.1, 0.001, True)},
    )


def test_run_records_spec_environment_and_offline_label(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(spec(seed=3, variant="n45", suite="smoke", config={"jobs": 2}))
    got = repo.get_run(run.run_id)
    assert got.method == "best-of-n" and got.variant == "n45" and got.seed == 3
    assert got.llm_offline is True and got.status == "running"
    assert got.environment == {"gpu": "X"} and got.git_commit == "abc123"
    assert got.budget == {"evaluations": 2} and got.config == {"jobs": 2}
    repo.finish_run(run.run_id)
    assert repo.get_run(run.run_id).status == "finished"
    online = repo.create_run(spec(llm="openai:gpt-4.1"))
    assert online.llm_offline is False


def test_failed_run_keeps_its_error(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(spec())
    repo.finish_run(run.run_id, error="boom")
    got = repo.get_run(run.run_id)
    assert got.status == "failed" and got.error == "boom"


def test_resume_with_same_id_returns_the_run_and_refuses_other_settings(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(spec(run_id="r1"))
    repo.finish_run("r1")
    again = repo.create_run(spec(run_id="r1"))
    assert again.run_id == "r1" and again.status == "running"
    assert again.created_at == run.created_at
    with pytest.raises(StoreError, match="resume it with the same settings"):
        repo.create_run(spec(run_id="r1", method="funsearch"))


def test_op_lifecycle_pending_searching_finished(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(spec())
    op = repo.ensure_op(run.run_id, "relu", "t" * 64)
    assert op.status == "pending" and op.started_at is None
    repo.start_op(run.run_id, "relu")
    assert repo.get_op(run.run_id, "relu").status == "searching"
    repo.update_op_usage(run.run_id, "relu", {"evaluations": 1})
    assert repo.get_op(run.run_id, "relu").usage == {"evaluations": 1}
    cid = repo.add_candidate(run.run_id, "relu", trial=0, source="s")
    repo.finish_op(
        run.run_id, "relu", best_candidate_id=cid, usage={"evaluations": 2, "llm_calls": 2}
    )
    op = repo.get_op(run.run_id, "relu")
    assert op.status == "finished" and op.best_candidate_id == cid and op.usage["llm_calls"] == 2
    # resume: ensure_op keeps the finished row
    assert repo.ensure_op(run.run_id, "relu", "t" * 64).status == "finished"


def test_op_failure_and_changed_task_file_are_reported(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(spec())
    repo.ensure_op(run.run_id, "relu", "a" * 64)
    repo.finish_op(run.run_id, "relu", error="evaluator crashed")
    assert repo.get_op(run.run_id, "relu").status == "failed"
    with pytest.raises(StoreError, match="another version of the task file"):
        repo.ensure_op(run.run_id, "relu", "b" * 64)
    with pytest.raises(ValueError, match="op status"):
        repo.set_op_status(run.run_id, "relu", "done")
    with pytest.raises(StoreError, match="call ensure_op first"):
        repo.finish_op(run.run_id, "gelu")


def test_add_candidate_is_idempotent_per_trial_and_rejects_a_different_source(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(spec())
    repo.ensure_op(run.run_id, "relu", "t")
    a = repo.add_candidate(
        run.run_id,
        "relu",
        trial=0,
        source="s0",
        parent_ids=[],
        llm_call_ids=[7],
        thought="tile it",
        operator="init",
        name="v0",
    )
    assert repo.add_candidate(run.run_id, "relu", trial=0, source="s0") == a
    with pytest.raises(StoreError, match="already holds another candidate"):
        repo.add_candidate(run.run_id, "relu", trial=0, source="other")
    assert repo.next_trial(run.run_id, "relu") == 1
    b = repo.add_candidate(
        run.run_id, "relu", trial=1, source="s1", parent_ids=[a], parse_error=None
    )
    rec = repo.get_candidate(b)
    assert rec.parent_ids == [a] and rec.source_sha256 == sha256_text("s1")
    assert repo.get_candidate(a).llm_call_ids == [7] and repo.get_candidate(a).thought == "tile it"
    assert [c.trial for c in repo.list_candidates(run.run_id, "relu")] == [0, 1]


def test_stored_verdict_round_trips_and_fills_indexed_columns(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(spec())
    repo.ensure_op(run.run_id, "relu", "t" * 64)
    cid = repo.add_candidate(run.run_id, "relu", trial=0, source="s")
    v = valid_verdict(3.0)
    vid = repo.add_verdict(v, candidate_id=cid, config_key="k")
    sv = repo.get_verdict(vid)
    assert sv.verdict == v
    assert (sv.run_id, sv.op, sv.task_sha256, sv.source_sha256) == (
        run.run_id,
        "relu",
        "t" * 64,
        sha256_text("s"),
    )
    row = repo.store.query(
        "SELECT runtime_us, speedup_eager, speedup_compile FROM verdicts WHERE verdict_id=?", (vid,)
    )[0]
    assert (
        row["runtime_us"] == 10.0 and row["speedup_eager"] == 3.0 and row["speedup_compile"] is None
    )


def test_find_verdict_matches_task_source_mode_and_config_only(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(spec())
    repo.ensure_op(run.run_id, "relu", "T")
    cid = repo.add_candidate(run.run_id, "relu", trial=0, source="s")
    k_feedback = config_key(EvalConfig())
    k_final = config_key(EvalConfig(mode=Mode.FINAL))
    repo.add_verdict(valid_verdict(1.5), candidate_id=cid, config_key=k_feedback)
    hit = repo.find_verdict("T", sha256_text("s"), Mode.FEEDBACK, k_feedback)
    assert hit is not None and hit.verdict.speedups["eager"].value == 1.5
    assert repo.find_verdict("T", sha256_text("s"), "final", k_final) is None
    assert repo.find_verdict("T", sha256_text("s"), "feedback", k_final) is None
    assert repo.find_verdict("other", sha256_text("s"), "feedback", k_feedback) is None
    assert repo.find_verdict("T", sha256_text("s2"), "feedback", k_feedback) is None


def test_config_key_ignores_build_dir_but_not_judging_settings():
    assert config_key(EvalConfig()) == config_key(EvalConfig(build_dir="/tmp/x"))
    assert config_key(EvalConfig()) != config_key(EvalConfig(profile="small"))
    assert config_key(EvalConfig()) != config_key(EvalConfig(device="cuda"))
    with pytest.raises(TypeError):
        config_key(42)


def test_v1_store_is_migrated_in_place(tmp_path):
    con = sqlite3.connect(tmp_path / "harness.sqlite")
    con.executescript(MIGRATIONS[0])
    con.execute("PRAGMA user_version = 1")
    con.execute(
        "INSERT INTO runs (run_id, method, llm, budget_json, seed, device, created_at) "
        "VALUES ('old', 'm', 'offline', '{}', 0, 'cpu', 'now')"
    )
    con.commit()
    con.close()
    repo = Results.open(tmp_path)
    assert repo.store.schema_version() == SCHEMA_VERSION
    assert repo.get_run("old").error is None


def test_newer_store_than_harness_is_refused_with_upgrade_hint(tmp_path):
    con = sqlite3.connect(tmp_path / "harness.sqlite")
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    with pytest.raises(StoreError, match="upgrade the harness"):
        Store(tmp_path)


def test_hardware_label_prefers_the_gpu_then_the_cpu_architecture():
    from harness.store.fingerprint import hardware_label

    assert hardware_label({"gpu": "NVIDIA H200", "machine": "x86_64"}) == "NVIDIA H200"
    assert hardware_label({"gpus": ["NVIDIA H100"]}) == "NVIDIA H100"
    assert hardware_label({"machine": "x86_64"}) == "CPU (x86_64)"
    assert hardware_label({}) == "CPU"


def test_fingerprint_without_torch_probe_still_names_platform_and_torch_version():
    from harness.store.fingerprint import environment

    env = environment(probe_torch=False)
    assert env["python"] and env["platform"] and env["torch"]
