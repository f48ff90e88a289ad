"""Typed rows of the results store: what the store API takes and gives back.

Plain dataclasses built from SQLite rows (JSON columns decoded), so callers never see SQL
or JSON strings. ``RunSpec`` is what a caller passes to create a run; the others are read.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from sandbox.contract import Verdict

if TYPE_CHECKING:
    from sandbox.contract import Task

OP_STATUSES = ("pending", "searching", "finished", "failed", "interrupted")  # interrupted: resumable


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _columns(cls: type, r: sqlite3.Row, **decoded: Any) -> dict[str, Any]:
    """Each field of the dataclass ``cls`` from the row's column of the same name, unless
    ``decoded`` gives it (a JSON column decoded, a column a store not migrated yet lacks)."""
    return {f.name: decoded[f.name] if f.name in decoded else r[f.name] for f in fields(cls)}


@dataclass(frozen=True)
class RunSpec:
    """Everything needed to create (or resume) a run."""

    method: str
    llm: str  # "offline", "offline:7", "openai:gpt-4.1", "replay:RUN"...
    budget: dict[str, Any]  # Budget as a dict (dataclasses.asdict(Budget(...)))
    seed: int = 0
    device: str = "cpu"
    variant: str | None = None
    suite: str | None = None
    config: dict[str, Any] = field(default_factory=dict)  # method/runner/eval config
    llm_offline: bool | None = None  # None: inferred from the llm spec ("offline..." => True)
    git_commit: str | None = None  # None: read from the harness checkout when possible
    environment: dict[str, Any] | None = None  # None: probed (see fingerprint.py)
    run_id: str | None = None  # None: generated
    rules: str = "strict"  # rule set judging every candidate of the run (EvalConfig.rules); its track

    def __post_init__(self) -> None:
        if not self.method:
            raise ValueError("RunSpec.method must be a non-empty method name")
        if not self.llm:
            raise ValueError(
                "RunSpec.llm must be an LLM spec such as 'offline' or 'openai:gpt-4.1'"
            )
        from sandbox.contract import RULE_SETS

        if self.rules not in RULE_SETS:
            raise ValueError(f"RunSpec.rules must be one of {', '.join(RULE_SETS)}, not {self.rules!r}")

    @property
    def offline(self) -> bool:
        if self.llm_offline is not None:
            return self.llm_offline
        return all(part.strip().startswith("offline") for part in self.llm.split(","))


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    method: str
    variant: str | None
    llm: str
    llm_offline: bool
    budget: dict[str, Any]
    seed: int
    device: str
    suite: str | None
    config: dict[str, Any]
    git_commit: str | None
    environment: dict[str, Any]
    status: str
    created_at: str
    finished_at: str | None
    error: str | None = None
    rules: str = "strict"  # schema v4; a store not migrated yet (read-only) has strict runs only

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> RunInfo:
        return cls(**_columns(
            cls, r,
            llm_offline=bool(r["llm_offline"]),
            budget=json.loads(r["budget_json"] or "{}"),
            config=json.loads(r["config_json"] or "{}"),
            environment=json.loads(r["environment_json"] or "{}"),
            rules=r["rules"] if "rules" in r.keys() else "strict",
        ))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class OpMetadata:
    """An op's task-file metadata as stored with the run (schema v3): what the op is (category,
    description), how it is judged (dtype, tolerances), its work formulas over the shape
    globals (FLOPs, minimum bytes moved) and its shape profiles (profile -> overrides)."""

    category: str
    description: str
    dtype: str
    atol: float
    rtol: float
    flops: str | None = None
    bytes: str | None = None
    shapes: dict[str, dict[str, Any]] = field(default_factory=dict)
    kernelbench: bool = False

    @classmethod
    def from_task(cls, task: Task) -> OpMetadata:
        m = task.meta
        return cls(
            category=m.category,
            description=m.description,
            dtype=m.dtype,
            atol=m.atol,
            rtol=m.rtol,
            flops=m.flops,
            bytes=m.bytes,
            shapes={k: dict(v) for k, v in task.shapes.items()},
            kernelbench=task.kernelbench,
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, default=str)

    @classmethod
    def from_json(cls, text: str | None) -> OpMetadata | None:
        if not text:
            return None
        d = json.loads(text)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True)
class RunOp:
    run_id: str
    op: str
    task_sha256: str
    status: str
    best_candidate_id: int | None
    final_verdict_id: int | None
    usage: dict[str, Any]
    error: str | None
    started_at: str | None
    finished_at: str | None
    meta: OpMetadata | None = None  # None: recorded before schema v3 (read the task file)

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> RunOp:
        return cls(**_columns(
            cls, r,
            usage=json.loads(r["usage_json"] or "{}"),
            meta=OpMetadata.from_json(r["meta_json"] if "meta_json" in r.keys() else None),
        ))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CandidateRecord:
    candidate_id: int
    run_id: str
    op: str
    trial: int
    name: str | None
    source: str
    source_sha256: str
    thought: str | None
    operator: str | None
    parent_ids: list[int]
    llm_call_ids: list[int]
    parse_error: str | None
    created_at: str

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> CandidateRecord:
        return cls(**_columns(
            cls, r,
            parent_ids=json.loads(r["parent_ids_json"] or "[]"),
            llm_call_ids=json.loads(r["llm_call_ids_json"] or "[]"),
        ))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StoredVerdict:
    """A verdict as stored: its row ids and indexed columns, plus the full ``Verdict``."""

    verdict_id: int
    candidate_id: int | None
    run_id: str | None
    op: str
    mode: str
    status: str
    task_sha256: str | None
    source_sha256: str | None
    config_key: str | None
    created_at: str
    verdict: Verdict

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> StoredVerdict:
        return cls(**_columns(cls, r, verdict=Verdict.from_json(r["verdict_json"])))


@dataclass(frozen=True)
class CandidateOutcome:
    """A candidate of an op with the status of its latest feedback verdict (None: not judged),
    read from indexed columns only (no verdict JSON)."""

    candidate_id: int
    parse_error: str | None
    status: str | None
    host_timers: bool


@dataclass(frozen=True)
class ValidKernel:
    """A candidate with a valid feedback verdict: what an archive of solved ops is built from."""

    run_id: str
    op: str
    source: str
    operator: str | None
    runtime_us: float | None
    speedup_eager: float | None
    allow_torch_ops: bool  # judged with torch ops allowed (e.g. a convert stage): not a kernel
