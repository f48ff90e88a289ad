"""Exporting stored runs: summaries for ``harness runs list/show`` and full dumps (JSON, CSV).

JSON export is one object per run: the run, its ops, and every candidate with its verdicts
(full Verdict dicts). CSV export is one row per verdict, joined with its candidate and run,
with the indexed numbers (status, rule, runtime, speedups and their CIs).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from harness.store.repo import Results

CSV_COLUMNS = [
    "run_id", "method", "variant", "llm", "llm_offline", "seed", "device", "op", "trial",
    "candidate_id", "name", "operator", "parent_ids", "verdict_id", "mode", "status", "rule",
    "runtime_us", "speedup_eager", "speedup_eager_ci_low", "speedup_eager_ci_high",
    "speedup_eager_significant", "speedup_compile", "speedup_compile_ci_low",
    "speedup_compile_ci_high", "speedup_compile_significant", "host_timers", "created_at",
]  # fmt: skip


def run_summary(repo: Results, run_id: str) -> dict[str, Any]:
    """One line per run: counts of ops by status and of candidates / valid feedback verdicts."""
    run = repo.get_run(run_id)
    if run is None:
        raise KeyError(run_id)
    ops = repo.list_ops(run_id)
    n_cand = repo.store.query(  # trial -1 is an op's seed kernel, not a candidate of the method
        "SELECT COUNT(*) FROM candidates WHERE run_id=? AND trial >= 0", (run_id,))[0][0]
    n_valid = repo.store.query(
        "SELECT COUNT(DISTINCT v.candidate_id) FROM verdicts v JOIN candidates c "
        "ON c.candidate_id = v.candidate_id WHERE v.run_id=? AND v.mode='feedback' "
        "AND v.status='valid' AND c.trial >= 0",
        (run_id,),
    )[0][0]
    return {
        "run_id": run.run_id,
        "method": run.method,
        "variant": run.variant or "",
        "llm": run.llm + (" (offline model)" if run.llm_offline else ""),
        "seed": run.seed,
        "device": run.device,
        "status": run.status,
        "ops": len(ops),
        "ops_finished": sum(o.status == "finished" for o in ops),
        "candidates": n_cand,
        "valid": n_valid,
        "created_at": run.created_at,
    }


def op_rows(repo: Results, run_id: str) -> list[dict[str, Any]]:
    """Per op of a run: status, trials, valid trials, final verdict status and speedups."""
    out = []
    for op in repo.list_ops(run_id):
        cands = [c for c in repo.list_candidates(run_id, op.op) if c.trial >= 0]  # -1: seed kernel
        fb = repo.list_verdicts(run_id, op.op, "feedback")
        ids = {c.candidate_id for c in cands}
        valid_ids = {v.candidate_id for v in fb if v.status == "valid" and v.candidate_id in ids}
        row: dict[str, Any] = {
            "op": op.op,
            "status": op.status,
            "trials": len(cands),
            "valid": len(valid_ids),
            "final_status": "",
            "speedup_eager": None,
            "speedup_compile": None,
            "error": op.error or "",
            "stages": (op.usage or {}).get("stages", {}),
            "speedup_vs_seed": ((op.usage or {}).get("seed") or {}).get("speedup_vs_seed"),
        }
        if op.final_verdict_id is not None:
            fv = repo.get_verdict(op.final_verdict_id)
            if fv is not None:
                row["final_status"] = fv.status
                for b in ("eager", "compile"):
                    s = fv.verdict.speedups.get(b)
                    if s is not None and fv.verdict.valid:
                        row[f"speedup_{b}"] = {"value": s.value, "ci": [s.ci_low, s.ci_high]}
        out.append(row)
    return out


def export_run(repo: Results, run_id: str) -> dict[str, Any]:
    run = repo.get_run(run_id)
    if run is None:
        raise KeyError(run_id)
    verdicts: dict[int | None, list[dict[str, Any]]] = {}
    for v in repo.list_verdicts(run_id):
        verdicts.setdefault(v.candidate_id, []).append(
            {"verdict_id": v.verdict_id, "config_key": v.config_key, **v.verdict.to_dict()}
        )
    return {
        "run": run.to_dict(),
        "ops": [o.to_dict() for o in repo.list_ops(run_id)],
        "candidates": [
            {**c.to_dict(), "verdicts": verdicts.get(c.candidate_id, [])}
            for c in repo.list_candidates(run_id)
        ],
        "llm_usage": repo.llm_usage(run_id),
    }


def export_json(repo: Results, run_ids: list[str]) -> str:
    return json.dumps({"runs": [export_run(repo, r) for r in run_ids]}, indent=2, default=str)


def verdict_rows(repo: Results, run_ids: list[str]) -> list[dict[str, Any]]:
    rows = []
    for run_id in run_ids:
        run = repo.get_run(run_id)
        if run is None:
            raise KeyError(run_id)
        cands = {c.candidate_id: c for c in repo.list_candidates(run_id)}
        for v in repo.list_verdicts(run_id):
            c = cands.get(v.candidate_id)
            cand_t = v.verdict.timings.get("candidate")
            row: dict[str, Any] = {
                "run_id": run_id,
                "method": run.method,
                "variant": run.variant or "",
                "llm": run.llm,
                "llm_offline": int(run.llm_offline),
                "seed": run.seed,
                "device": run.device,
                "op": v.op,
                "trial": c.trial if c else "",
                "candidate_id": v.candidate_id if v.candidate_id is not None else "",
                "name": (c.name or "") if c else "",
                "operator": (c.operator or "") if c else "",
                "parent_ids": " ".join(map(str, c.parent_ids)) if c else "",
                "verdict_id": v.verdict_id,
                "mode": v.mode,
                "status": v.status,
                "rule": v.verdict.rule or "",
                "runtime_us": cand_t.median_us if (cand_t and v.verdict.valid) else "",
                "host_timers": int(v.verdict.host_timers),
                "created_at": v.created_at,
            }
            for b in ("eager", "compile"):
                s = v.verdict.speedups.get(b)
                row[f"speedup_{b}"] = s.value if s else ""
                row[f"speedup_{b}_ci_low"] = s.ci_low if s else ""
                row[f"speedup_{b}_ci_high"] = s.ci_high if s else ""
                row[f"speedup_{b}_significant"] = int(s.significant) if s else ""
            rows.append(row)
    return rows


def to_csv(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    cols = columns or (list(rows[0]) if rows else [])
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def export_csv(repo: Results, run_ids: list[str]) -> str:
    return to_csv(verdict_rows(repo, run_ids), CSV_COLUMNS)
