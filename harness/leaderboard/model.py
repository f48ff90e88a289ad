"""The leaderboard's typed data: ``leaderboard.json`` is ``Leaderboard.to_dict()``.

Frozen dataclasses, one per thing a page shows; the JSON is the single source of truth that
the HTML is rendered from. ``SCHEMA_VERSION`` changes when a field changes meaning;
``Leaderboard.from_dict`` rebuilds the typed tree, ignores unknown keys (newer minor
additions) and refuses a newer schema version with a message saying what to do.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from harness.estimate import Estimate, SpeedupCI

SCHEMA_VERSION = 3  # 2: entries carry their rule set (track); one ranking table per track
# 3: entries carry their settings and table; one ranking table per comparable set (op set, suite
#    version, device class, rule set); per-op speedups over judging sessions with a direction;
#    deployed (max(1, speedup)) and raw per-op numbers
OFFLINE_LABEL = "offline model (not an LLM result)"
HOST_TIMER_LABEL = "CPU host timers: test only"
PARTIAL_LABEL = "partial rules: torch beside its own kernels"
# The rule sets' tracks (sandbox/rules/__init__.py RULE_SETS): each ranks only its own entries, never mixed.
TRACKS = {"strict": ("overview", "Ranking, strict rules: the candidate's own code computes everything"),
          "partial": ("overview_partial", "Ranking, partial rules: torch beside the candidate's kernels "
                      "(at least one op of the reference replaced)")}


class LeaderboardError(ValueError):
    pass


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    lower_is_better: bool | None = None  # None: not a ranking quantity
    kind: str = "text"  # text | number | interval | percent | link
    help: str = ""


@dataclass(frozen=True)
class Table:
    table_id: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[dict[str, Any], ...]
    note: str = ""
    # what every ranked entry shares: rules, device, hardware, ops, suite_version (ranking tables)
    context: dict[str, Any] = field(default_factory=dict)
    unranked: tuple[dict[str, Any], ...] = ()  # entries of this set not ranked, with the reason

    def __post_init__(self) -> None:
        keys = {c.key for c in self.columns}
        for i, r in enumerate(self.rows):
            missing = keys - set(r)
            if missing:
                raise LeaderboardError(f"table {self.table_id!r} row {i} lacks {sorted(missing)}")


@dataclass(frozen=True)
class RunRef:
    run_id: str
    seed: int
    status: str
    created_at: str
    finished_at: str | None
    git_commit: str | None
    results_dir: str
    hardware: str
    environment: dict[str, Any] = field(default_factory=dict)
    # the evaluator settings the run recorded (`harness run --eval-option`): `leaderboard verify`
    # re-judges the run's kernels under them (harness/policy.py)
    eval_overrides: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BestKernel:
    """The best kernel an entry found for an op, judged in final mode."""

    run_id: str
    candidate_id: int
    name: str
    thought: str
    source: str
    source_sha256: str
    task_sha256: str
    final_status: str
    final_message: str
    device: str
    hardware: str
    host_timers: bool
    speedups: dict[str, SpeedupCI] = field(default_factory=dict)
    runtime_us: float | None = None
    baselines_us: dict[str, float] = field(default_factory=dict)
    speed_of_light: dict[str, float] = field(default_factory=dict)
    verdict_ids: tuple[int, ...] = ()  # the final verdicts of its judging sessions, in the store
    environment: dict[str, Any] = field(default_factory=dict)  # the verdict's fingerprint

    @property
    def sessions(self) -> int:
        return max(1, len(self.verdict_ids))


@dataclass(frozen=True)
class EntryOp:
    op: str
    n_runs: int
    trials: int
    compiled: int
    correct: int
    speedup_eager: float  # deployed: geomean over runs of max(1, speedup), 1.0 without a valid kernel
    speedup_compile: float
    best: BestKernel | None = None
    raw_eager: float | None = None  # geomean over runs with a valid kernel of the raw speedup
    raw_compile: float | None = None
    n_valid_runs: int = 0  # runs (seeds) whose final kernel for the op is valid


@dataclass(frozen=True)
class Summary:
    baseline: str
    ci_kind: str  # "bootstrap over ops" (one run) | "t over seeds" (several runs)
    n_ops: int
    n_valid_ops: int
    compiled_rate: Estimate
    correct_rate: Estimate
    median: Estimate
    geomean: Estimate
    median_raw: Estimate
    geomean_raw: Estimate
    fast_1: Estimate
    fast_2: Estimate
    valid_ops: Estimate = Estimate(None)


@dataclass(frozen=True)
class Entry:
    """One method configuration: runs equal in every setting but their seeds (``settings``)."""

    entry_id: str
    label: str
    method: str
    variant: str | None
    llm: str
    offline: bool
    host_timers: bool
    device: str
    hardware: str
    budget: dict[str, Any]
    config: dict[str, Any]
    runs: tuple[RunRef, ...]
    usage: dict[str, float]
    summaries: dict[str, Summary]  # baseline -> summary
    run_summaries: dict[str, Summary]  # run_id -> summary vs eager (bootstrap over ops)
    ops: tuple[EntryOp, ...]
    rules: str = "strict"  # the rule set of its runs: the track it ranks on
    settings: dict[str, Any] = field(default_factory=dict)  # every setting but the seeds (settings.py)
    table_id: str = ""  # the ranking table of its comparable set
    planned_ops: tuple[str, ...] = ()  # the ops its runs set out to judge
    complete: bool = True  # every run finished every planned op (else it is not ranked)
    task_shas: dict[str, str] = field(default_factory=dict)  # op -> task file sha256
    suite: str | None = None  # the suite its runs named (None: ops named one by one)

    @property
    def badges(self) -> list[str]:
        out = [PARTIAL_LABEL] if self.rules == "partial" else []
        if self.offline:
            out.append(OFFLINE_LABEL)
        if self.host_timers:
            out.append(HOST_TIMER_LABEL)
        return out


@dataclass(frozen=True)
class OpInfo:
    op: str
    category: str
    description: str
    dtype: str
    task_sha256s: tuple[str, ...]


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    n_common: int
    n_nonzero: int
    statistic: float | None
    p_value: float | None
    p_holm: float | None
    rank_biserial: float | None
    median_log_ratio: float | None
    significant: bool
    table_id: str = ""  # the ranking table both entries rank in
    seeds_a: int = 0
    seeds_b: int = 0

    @property
    def verdict(self) -> str:
        """'a faster' / 'b faster' / 'no clear difference' (Holm-adjusted two-sided test)."""
        if not self.significant or self.rank_biserial is None or self.rank_biserial == 0:
            return "no clear difference"
        return "a faster" if self.rank_biserial > 0 else "b faster"


@dataclass(frozen=True)
class Provenance:
    generated_at: str
    git_describe: str | None
    git_commit: str | None
    harness_version: str
    python: str
    platform: str
    packages: dict[str, str]
    builder_hardware: str
    run_hardware: tuple[str, ...]
    run_commits: tuple[str, ...]
    results_dirs: tuple[str, ...]
    first_run: str | None
    last_run: str | None


@dataclass(frozen=True)
class Leaderboard:
    schema_version: int
    provenance: Provenance
    primary_baseline: str
    entries: tuple[Entry, ...]
    ops: tuple[OpInfo, ...]
    pairwise: tuple[Pair, ...]
    tables: tuple[Table, ...]

    def __post_init__(self) -> None:
        if self.schema_version != SCHEMA_VERSION:
            raise LeaderboardError(
                f"leaderboard schema version {self.schema_version}, this harness reads "
                f"{SCHEMA_VERSION}: rebuild it with `harness leaderboard build` or upgrade the harness"
            )
        ids = [e.entry_id for e in self.entries]
        if len(set(ids)) != len(ids):
            raise LeaderboardError(f"duplicate entry ids: {ids}")

    def entry(self, entry_id: str) -> Entry:
        for e in self.entries:
            if e.entry_id == entry_id:
                return e
        raise KeyError(entry_id)

    def table(self, table_id: str) -> Table:
        for t in self.tables:
            if t.table_id == table_id:
                return t
        raise KeyError(table_id)

    # -- JSON -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=False, allow_nan=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Leaderboard:
        if not isinstance(d, dict) or "schema_version" not in d:
            raise LeaderboardError("not a leaderboard.json: no schema_version")
        return _build(cls, d)

    @classmethod
    def from_json(cls, text: str) -> Leaderboard:
        return cls.from_dict(json.loads(text))


def _build(tp: Any, v: Any) -> Any:
    """Rebuild a value of annotated type ``tp`` from its JSON form."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return None if v is None else _build(args[0], v)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        return tp(**{k: _build(hints[k], x) for k, x in v.items() if k in names})
    if origin is tuple:
        ((item, *_),) = [typing.get_args(tp)]
        return tuple(_build(item, x) for x in v)
    if origin is dict:
        _, vt = typing.get_args(tp)
        return {k: _build(vt, x) for k, x in v.items()}
    return v
