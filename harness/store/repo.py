"""The results store API: runs, their ops, candidates and verdicts, in one SQLite file.

    repo = Results.open("results")
    run = repo.create_run(RunSpec(method="best-of-n", llm="offline", budget={"evaluations": 2}))
    repo.ensure_op(run.run_id, "relu", task.sha256); repo.start_op(run.run_id, "relu")
    cid = repo.add_candidate(run.run_id, "relu", trial=0, source=src, name="v1")
    key = config_key(eval_config)
    hit = repo.find_verdict(task.sha256, sha256_text(src), "feedback", key)   # skip re-judging
    vid = repo.add_verdict(verdict, candidate_id=cid, task_sha256=task.sha256, config_key=key)
    repo.finish_op(run.run_id, "relu", best_candidate_id=cid, final_verdict_id=vid2, usage={...})
    repo.finish_run(run.run_id)

Every write is one ``BEGIN IMMEDIATE`` transaction (``Store.tx``), so threads and processes
may write to the same file at once. Writes are idempotent where a resumed run repeats them:
``create_run`` with an existing id returns that run, ``ensure_op`` keeps an existing row,
``add_candidate`` with an existing (run, op, trial) and the same source returns its id.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.store import fingerprint
from harness.store.db import Store, StoreError, utcnow
from harness.store.llm_calls import LLMCalls
from harness.store.records import (
    OP_STATUSES,
    CandidateRecord,
    OpMetadata,
    RunInfo,
    RunOp,
    RunSpec,
    sha256_text,
)
from harness.store.verdicts import VerdictStore, config_key  # noqa: F401 (re-exported)


def new_run_id(method: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"{method}-{stamp}-{secrets.token_hex(2)}"


def _j(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=str)


class Results(VerdictStore):
    """Domain operations over one results store (one ``harness.sqlite``)."""

    def __init__(self, store: Store):
        self.store = store

    @classmethod
    def open(cls, results_dir: str | Path) -> Results:
        return cls(Store(results_dir))

    @classmethod
    def open_read_only(cls, path: str | Path) -> Results:
        """An existing store (results folder or ``.sqlite`` file), read only, not migrated."""
        return cls(Store.read_only(path))

    @property
    def path(self) -> Path:
        return self.store.path

    def close(self) -> None:
        self.store.close()

    # -- runs ----------------------------------------------------------------------------
    def create_run(self, spec: RunSpec) -> RunInfo:
        """Create a run, or return the existing one with ``spec.run_id`` (resume).

        Resuming with a different method or LLM than recorded is refused: that would mix two
        experiments under one id.
        """
        run_id = spec.run_id or new_run_id(spec.method)
        existing = self.get_run(run_id)
        if existing is not None:
            if (existing.method, existing.llm, existing.seed) != (spec.method, spec.llm, spec.seed):
                raise StoreError(
                    f"{self.path}: run {run_id!r} exists with method={existing.method!r} "
                    f"llm={existing.llm!r} seed={existing.seed}; resume it with the same settings "
                    "or pick another --run-id"
                )
            if existing.rules != spec.rules:
                raise StoreError(
                    f"{self.path}: run {run_id!r} was judged under --rules {existing.rules}; "
                    f"resuming it with --rules {spec.rules} would mix two rule sets in one run: "
                    f"resume with --rules {existing.rules} or pick another --run-id"
                )
            if existing.status != "running":
                with self.store.tx() as c:
                    c.execute(
                        "UPDATE runs SET status='running', finished_at=NULL, error=NULL WHERE run_id=?",
                        (run_id,),
                    )
            return self.get_run(run_id)  # type: ignore[return-value]
        env = (
            spec.environment
            if spec.environment is not None
            else fingerprint.environment(spec.device)
        )
        commit = spec.git_commit if spec.git_commit is not None else fingerprint.git_commit()
        with self.store.tx() as c:
            c.execute(
                "INSERT INTO runs (run_id, method, variant, llm, llm_offline, budget_json, seed, "
                "device, suite, config_json, git_commit, environment_json, status, created_at, rules) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?, 'running', ?, ?)",
                (
                    run_id,
                    spec.method,
                    spec.variant,
                    spec.llm,
                    int(spec.offline),
                    _j(spec.budget),
                    spec.seed,
                    spec.device,
                    spec.suite,
                    _j(spec.config),
                    commit,
                    _j(env),
                    utcnow(),
                    spec.rules,
                ),
            )
        return self.get_run(run_id)  # type: ignore[return-value]

    def finish_run(self, run_id: str, *, error: str | None = None, status: str | None = None) -> None:
        """Mark a run finished, or failed when ``error`` is given; ``status`` (e.g. ``interrupted``:
        stopped by a signal or an LLM outage, resumable with its run id) names it instead."""
        status = status or ("failed" if error else "finished")
        with self.store.tx() as c:
            n = c.execute(
                "UPDATE runs SET status=?, finished_at=?, error=? WHERE run_id=?",
                (status, utcnow(), error, run_id),
            ).rowcount
        if n == 0:
            raise StoreError(f"{self.path}: no run {run_id!r} (list runs with: harness runs list)")

    def get_run(self, run_id: str) -> RunInfo | None:
        rows = self.store.query("SELECT * FROM runs WHERE run_id=?", (run_id,))
        return RunInfo.from_row(rows[0]) if rows else None

    def list_runs(self, *, method: str | None = None, status: str | None = None) -> list[RunInfo]:
        sql, args = "SELECT * FROM runs WHERE 1=1", []
        if method:
            sql += " AND method=?"
            args.append(method)
        if status:
            sql += " AND status=?"
            args.append(status)
        return [
            RunInfo.from_row(r)
            for r in self.store.query(sql + " ORDER BY created_at, run_id", tuple(args))
        ]

    # -- ops of a run ----------------------------------------------------------------------
    def ensure_op(
        self, run_id: str, op: str, task_sha256: str, meta: OpMetadata | None = None
    ) -> RunOp:
        """Add the op to the run as ``pending`` unless it is there already (resume keeps it).

        ``meta``: the task file's metadata, stored with the op (a row without any, e.g. one
        written before schema v3, gets it on resume)."""
        meta_json = meta.to_json() if meta is not None else None
        with self.store.tx() as c:
            c.execute(
                "INSERT OR IGNORE INTO run_ops (run_id, op, task_sha256, meta_json) VALUES (?,?,?,?)",
                (run_id, op, task_sha256, meta_json),
            )
            if meta_json is not None:
                c.execute(
                    "UPDATE run_ops SET meta_json=? WHERE run_id=? AND op=? AND task_sha256=? "
                    "AND meta_json IS NULL",
                    (meta_json, run_id, op, task_sha256),
                )
        got = self.get_op(run_id, op)
        assert got is not None
        if got.task_sha256 != task_sha256:
            raise StoreError(
                f"{self.path}: run {run_id!r} op {op!r} was recorded for another version of the "
                f"task file (sha256 {got.task_sha256[:12]} != {task_sha256[:12]}); start a new run"
            )
        return got

    def set_op_status(self, run_id: str, op: str, status: str, *, error: str | None = None) -> None:
        if status not in OP_STATUSES:
            raise ValueError(f"op status {status!r}: use one of {OP_STATUSES}")
        now = utcnow()
        with self.store.tx() as c:
            if status == "searching":
                c.execute(
                    "UPDATE run_ops SET status=?, started_at=COALESCE(started_at, ?), error=NULL "
                    "WHERE run_id=? AND op=?",
                    (status, now, run_id, op),
                )
            else:
                done = now if status in ("finished", "failed", "interrupted") else None
                c.execute(
                    "UPDATE run_ops SET status=?, error=?, finished_at=? WHERE run_id=? AND op=?",
                    (status, error, done, run_id, op),
                )

    def start_op(self, run_id: str, op: str) -> None:
        self.set_op_status(run_id, op, "searching")

    def update_op_usage(self, run_id: str, op: str, usage: dict[str, Any]) -> None:
        with self.store.tx() as c:
            c.execute(
                "UPDATE run_ops SET usage_json=? WHERE run_id=? AND op=?", (_j(usage), run_id, op)
            )

    def finish_op(
        self,
        run_id: str,
        op: str,
        *,
        best_candidate_id: int | None = None,
        final_verdict_id: int | None = None,
        usage: dict[str, Any] | None = None,
        error: str | None = None,
        status: str | None = None,
    ) -> None:
        """Close an op: ``finished`` (with its best candidate and final verdict, if any), or
        ``failed`` when ``error`` is given; ``status`` (``interrupted``: stopped before its budget
        was spent, resumable) names it instead. ``usage``: evaluations, llm calls, tokens, seconds, cost."""
        status = status or ("failed" if error else "finished")
        with self.store.tx() as c:
            n = c.execute(
                "UPDATE run_ops SET status=?, best_candidate_id=?, final_verdict_id=?, "
                "usage_json=COALESCE(?, usage_json), error=?, finished_at=? WHERE run_id=? AND op=?",
                (
                    status,
                    best_candidate_id,
                    final_verdict_id,
                    _j(usage) if usage is not None else None,
                    error,
                    utcnow(),
                    run_id,
                    op,
                ),
            ).rowcount
        if n == 0:
            raise StoreError(f"{self.path}: run {run_id!r} has no op {op!r}; call ensure_op first")

    def get_op(self, run_id: str, op: str) -> RunOp | None:
        rows = self.store.query("SELECT * FROM run_ops WHERE run_id=? AND op=?", (run_id, op))
        return RunOp.from_row(rows[0]) if rows else None

    def list_ops(self, run_id: str) -> list[RunOp]:
        rows = self.store.query("SELECT * FROM run_ops WHERE run_id=? ORDER BY op", (run_id,))
        return [RunOp.from_row(r) for r in rows]

    # -- candidates ----------------------------------------------------------------------------
    def add_candidate(
        self,
        run_id: str,
        op: str,
        *,
        trial: int,
        source: str,
        name: str | None = None,
        thought: str | None = None,
        operator: str | None = None,
        parent_ids: list[int] | None = None,
        llm_call_ids: list[int] | None = None,
        parse_error: str | None = None,
    ) -> int:
        """Store one proposal; returns its candidate id. Re-adding the same (run, op, trial)
        with the same source returns the existing id (resume); another source is an error."""
        sha = sha256_text(source)
        with self.store.tx() as c:
            row = c.execute(
                "SELECT candidate_id, source_sha256 FROM candidates WHERE run_id=? AND op=? AND trial=?",
                (run_id, op, trial),
            ).fetchone()
            if row is not None:
                if row["source_sha256"] != sha:
                    raise StoreError(
                        f"{self.path}: run {run_id!r} op {op!r} trial {trial} already holds another "
                        "candidate; a resumed run must replay the same proposals (use the next trial)"
                    )
                return int(row["candidate_id"])
            cur = c.execute(
                "INSERT INTO candidates (run_id, op, trial, name, source, source_sha256, thought, "
                "operator, parent_ids_json, llm_call_ids_json, parse_error, created_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    run_id,
                    op,
                    trial,
                    name,
                    source,
                    sha,
                    thought,
                    operator,
                    _j(list(parent_ids or [])),
                    _j(list(llm_call_ids or [])),
                    parse_error,
                    utcnow(),
                ),
            )
            return int(cur.lastrowid)

    def next_trial(self, run_id: str, op: str) -> int:
        row = self.store.query(
            "SELECT MAX(trial) FROM candidates WHERE run_id=? AND op=?", (run_id, op)
        )
        top = row[0][0]
        return 0 if top is None else int(top) + 1

    def get_candidate(self, candidate_id: int) -> CandidateRecord | None:
        rows = self.store.query("SELECT * FROM candidates WHERE candidate_id=?", (candidate_id,))
        return CandidateRecord.from_row(rows[0]) if rows else None

    def list_candidates(self, run_id: str, op: str | None = None) -> list[CandidateRecord]:
        if op is None:
            rows = self.store.query(
                "SELECT * FROM candidates WHERE run_id=? ORDER BY op, trial", (run_id,)
            )
        else:
            rows = self.store.query(
                "SELECT * FROM candidates WHERE run_id=? AND op=? ORDER BY trial", (run_id, op)
            )
        return [CandidateRecord.from_row(r) for r in rows]

    # -- llm calls (recorded by the LLM layer through LLMCalls) -----------------------------
    @property
    def llm_calls(self) -> LLMCalls:
        return LLMCalls(self.store)

    def llm_usage(self, run_id: str) -> dict[str, dict[str, Any]]:
        """Per op: number of LLM calls, prompt/completion tokens, latency, errors."""
        return self.llm_calls.usage_by_op(run_id)
