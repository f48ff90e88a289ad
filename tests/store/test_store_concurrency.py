"""Concurrent writers on one store file: threads and separate processes lose nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from harness.store import Results, RunSpec
from sandbox.verdict import Status, Verdict

ROOT = Path(__file__).resolve().parents[2]
N_PER_WRITER = 25


def _write_op(results_dir: Path, run_id: str, op: str) -> None:
    repo = Results.open(results_dir)
    repo.ensure_op(run_id, op, "sha-" + op)
    repo.start_op(run_id, op)
    for t in range(N_PER_WRITER):
        cid = repo.add_candidate(run_id, op, trial=t, source=f"{op}-{t}")
        repo.add_verdict(
            Verdict(status=Status.COMPILE_ERROR, task=op), candidate_id=cid, config_key="k"
        )
        repo.update_op_usage(run_id, op, {"evaluations": t + 1})
    repo.finish_op(run_id, op, usage={"evaluations": N_PER_WRITER})
    repo.close()


def _check(repo: Results, run_id: str, ops: list[str]) -> None:
    assert {o.op for o in repo.list_ops(run_id)} == set(ops)
    for op in ops:
        cands = repo.list_candidates(run_id, op)
        assert [c.trial for c in cands] == list(range(N_PER_WRITER))
        assert len(repo.list_verdicts(run_id, op)) == N_PER_WRITER
        assert repo.get_op(run_id, op).status == "finished"
        assert repo.get_op(run_id, op).usage == {"evaluations": N_PER_WRITER}


def test_parallel_threads_writing_one_store_lose_no_rows(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(
        RunSpec(method="m", llm="offline", budget={}, environment={}, git_commit="")
    )
    ops = [f"op{i}" for i in range(6)]
    errors: list[BaseException] = []

    def work(op: str) -> None:
        try:
            _write_op(tmp_path, run.run_id, op)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(op,)) for op in ops]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    _check(repo, run.run_id, ops)


def test_parallel_processes_writing_one_store_lose_no_rows(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(
        RunSpec(method="m", llm="offline", budget={}, environment={}, git_commit="")
    )
    ops = [f"proc{i}" for i in range(4)]
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_store_concurrency import _write_op
        from pathlib import Path
        _write_op(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path), run.run_id, op],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for op in ops
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    _check(repo, run.run_id, ops)


def test_concurrent_resume_of_the_same_trial_stores_one_candidate(tmp_path):
    repo = Results.open(tmp_path)
    run = repo.create_run(
        RunSpec(method="m", llm="offline", budget={}, environment={}, git_commit="")
    )
    repo.ensure_op(run.run_id, "relu", "s")
    ids: list[int] = []

    def add() -> None:
        ids.append(Results.open(tmp_path).add_candidate(run.run_id, "relu", trial=0, source="same"))

    threads = [threading.Thread(target=add) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == 1 and len(repo.list_candidates(run.run_id)) == 1


def test_processes_opening_a_fresh_store_at_once_migrate_it_once(tmp_path):
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from harness.store import Results, RunSpec
        repo = Results.open(sys.argv[1])
        repo.create_run(RunSpec(method="m", llm="offline", budget={{}}, environment={{}},
                                git_commit="", run_id=sys.argv[2]))
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path), f"r{i}"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    repo = Results.open(tmp_path)
    assert sorted(r.run_id for r in repo.list_runs()) == ["r0", "r1", "r2", "r3"]
    from harness.store.schema import SCHEMA_VERSION

    assert repo.store.schema_version() == SCHEMA_VERSION


def test_a_second_open_in_one_process_keeps_the_first_connections_locks(tmp_path):
    """SQLite's locks are POSIX record locks, dropped for the whole process when any descriptor of
    the file in it is closed. A second Results.open in a process that held a connection used to
    read the file's header with open()/close(); another process closing the store then took
    itself for the last one and deleted the WAL under the first connection (2026-11-27: "disk I/O
    error" at the next open). Each step below is what a resumed run does beside a `runs show`."""
    first = Results.open(tmp_path)
    first.create_run(RunSpec(method="m", llm="offline", budget={"evaluations": 1}, run_id="r", environment={}))
    second = Results.open(tmp_path)  # the same process opens the store again
    other = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        from harness.store import Results
        r = Results.open({str(tmp_path)!r})
        assert r.get_run("r").status == "running"
        r.close()
    """)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert other.returncode == 0, other.stderr
    assert (tmp_path / "harness.sqlite-wal").exists()  # the other process left the WAL alone
    first.finish_run("r")
    third = Results.open(tmp_path)
    assert third.get_run("r").status == "finished" and second.get_run("r").status == "finished"
