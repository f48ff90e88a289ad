"""Reading results stores into per-run data the leaderboard aggregates.

For each run: its ops as ``OpOutcome`` (trial counts from feedback verdicts, speedups from
the final verdicts of the best kernel: one per judging session, combined over the sessions by
``harness.stats.combine_sessions``), the best kernels themselves, the usage recorded for
each op (evaluations, LLM calls, tokens, seconds, cost), the op metadata stored with
the run (category, description, dtype...; absent in stores written before schema v3), the ops
the run set out to judge and the task file versions it judged. ``RunData.evidence`` keeps each
op's session verdicts (full JSON) for the site's per-row files; the leaderboard JSON carries
only their numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.estimate import SpeedupCI
from harness.leaderboard.model import BestKernel
from harness.stats import OpOutcome, combine_sessions
from harness.store import OpMetadata, Results, RunInfo
from harness.store.db import DB_NAME
from harness.store.fingerprint import hardware_label


@dataclass
class RunData:
    run: RunInfo
    results_dir: str
    outcomes: list[OpOutcome]
    best: dict[str, BestKernel | None]
    usage: dict[str, float] = field(default_factory=dict)
    hardware: str = ""
    host_timers: bool = False
    op_meta: dict[str, OpMetadata] = field(default_factory=dict)  # as stored with the run (v3+)
    planned_ops: tuple[str, ...] = ()  # the ops the run set out to judge (its config), sorted
    task_shas: dict[str, str] = field(default_factory=dict)  # op -> task file sha256 it judged
    evidence: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # op -> session verdicts

    @property
    def complete(self) -> bool:
        """Every planned op finished."""
        return set(self.planned_ops) <= {o.op for o in self.outcomes}


class NoResults(FileNotFoundError):
    pass


def open_stores(dirs: list[str | Path]) -> list[tuple[str, Results]]:
    out = []
    for d in dirs:
        p = Path(d)
        if not (p / DB_NAME).is_file():
            raise NoResults(
                f"{p}: no results store ({DB_NAME}); pass the --results DIR that `harness run` wrote"
            )
        out.append((str(p), Results.open(p)))
    return out


def collect(dirs: list[str | Path], *, include_running: bool = True) -> list[RunData]:
    """Every run (with at least one finished op) of every store in ``dirs``."""
    runs = []
    for d, repo in open_stores(dirs):
        for run in repo.list_runs():
            if run.status == "running" and not include_running:
                continue
            data = collect_run(repo, run, d)
            if data.outcomes:
                runs.append(data)
        repo.close()
    return runs


def _finite(*xs: float | None) -> bool:
    """A speedup usable in statistics: present, finite and positive (a zero or infinite
    time from a broken measurement is left out, and the op falls back to 1.0)."""
    return all(x is not None and math.isfinite(x) and x > 0 for x in xs)


def _usage_sum(usages: list[dict[str, Any]]) -> dict[str, float]:
    tot: dict[str, float] = {}
    for u in usages:
        for k, v in u.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                tot[k] = tot.get(k, 0) + v
    return tot


def _sessions(repo: Results, run_id: str, final: Any) -> list[Any]:
    """The final verdicts of the op's judging sessions (the best kernel's final-mode verdicts of
    this run, one per session key), the op's recorded final verdict among them."""
    if final.candidate_id is None:
        return [final]
    found = repo.final_sessions(run_id, final.candidate_id)
    if not any(sv.verdict_id == final.verdict_id for sv in found):
        return [final]
    return found


def collect_run(repo: Results, run: RunInfo, results_dir: str) -> RunData:
    outcomes: list[OpOutcome] = []
    best: dict[str, BestKernel | None] = {}
    host = run.device == "cpu"
    usages = []
    op_meta: dict[str, OpMetadata] = {}
    shas: dict[str, str] = {}
    evidence: dict[str, list[dict[str, Any]]] = {}
    for op in repo.list_ops(run.run_id):
        shas[op.op] = op.task_sha256
        if op.status != "finished":
            continue
        usages.append(op.usage)
        if op.meta is not None:
            op_meta[op.op] = op.meta
        # counts from the indexed columns only (no verdict JSON parsing: stores get large)
        cands = repo.feedback_outcomes(run.run_id, op.op)
        compiled = correct = 0
        for c in cands:
            if c.status is None or c.parse_error:
                continue
            compiled += c.status != "compile_error"
            correct += c.status == "valid"
            host = host or c.host_timers
        final = repo.get_verdict(op.final_verdict_id) if op.final_verdict_id else None
        speedups: dict[str, SpeedupCI] = {}
        kernel = None
        status = final.status if final else None
        if final is not None:
            sessions = _sessions(repo, run.run_id, final)
            evidence[op.op] = [sv.verdict.to_dict() for sv in sessions]
            failed = [sv for sv in sessions if sv.status != "valid"]
            if failed:  # one session that is not valid makes the op not valid: the first such
                final = failed[0] if final.status == "valid" else final
                status = final.status
            fv = final.verdict
            host = host or any(sv.verdict.host_timers for sv in sessions)
            if not failed:
                speedups = _combined(sessions)
            cand = repo.get_candidate(final.candidate_id) if final.candidate_id else None
            if cand is not None:
                times = _median_times(sessions) if not failed else {}
                kernel = BestKernel(
                    run_id=run.run_id,
                    candidate_id=cand.candidate_id,
                    name=cand.name or f"trial {cand.trial}",
                    thought=cand.thought or "",
                    source=cand.source,
                    source_sha256=cand.source_sha256,
                    task_sha256=op.task_sha256,
                    final_status=fv.status.value,
                    final_message=fv.message,
                    device=fv.device,
                    hardware=hardware_label(fv.environment)
                    if fv.environment.get("gpu")
                    else hardware_label(run.environment),
                    host_timers=fv.host_timers,
                    speedups=dict(speedups),  # the same frozen records as the op's outcome
                    runtime_us=times.get("candidate") if fv.valid else None,
                    baselines_us={k: v for k, v in times.items() if k != "candidate"},
                    speed_of_light=dict(fv.speed_of_light),
                    verdict_ids=tuple(sv.verdict_id for sv in sessions),
                    environment=dict(fv.environment),
                )
        outcomes.append(
            OpOutcome(
                op=op.op,
                trials=len(cands),
                compiled=compiled,
                correct=correct,
                final_status=status,
                speedups=speedups,
            )
        )
        best[op.op] = kernel
    usage = _usage_sum(usages)
    llm = repo.llm_usage(run.run_id)
    if llm:
        usage.setdefault("llm_calls", sum(v["calls"] for v in llm.values()))
        usage.setdefault("prompt_tokens", sum(v["prompt_tokens"] for v in llm.values()))
        usage.setdefault("completion_tokens", sum(v["completion_tokens"] for v in llm.values()))
    return RunData(
        run=run,
        results_dir=results_dir,
        outcomes=outcomes,
        best=best,
        usage=usage,
        hardware=hardware_label(run.environment),
        host_timers=host,
        op_meta=op_meta,
        planned_ops=tuple(sorted(set((run.config or {}).get("ops") or [o.op for o in outcomes]))),
        task_shas=shas,
        evidence=evidence,
    )


def _median_times(sessions: list[Any]) -> dict[str, float]:
    """Per timed callable (candidate, eager, compile), the geometric mean over the sessions of
    its median time (the one session's median when there is one)."""
    per: dict[str, list[float]] = {}
    for sv in sessions:
        for k, m in sv.verdict.timings.items():
            if _finite(m.median_us):
                per.setdefault(k, []).append(m.median_us)
    return {k: math.exp(sum(map(math.log, v)) / len(v)) for k, v in per.items()}


def _combined(sessions: list[Any]) -> dict[str, SpeedupCI]:
    """Per baseline, the speedup over the sessions that measured it (finite numbers only)."""
    per: dict[str, list[SpeedupCI]] = {}
    for sv in sessions:
        for b, s in sv.verdict.speedups.items():
            if _finite(s.value, s.ci_low, s.ci_high):
                per.setdefault(b, []).append(SpeedupCI.from_verdict(s))
    return {b: combine_sessions(v) for b, v in per.items()}
