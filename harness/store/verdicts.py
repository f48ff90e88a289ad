"""The verdict half of the store API: storing full verdicts with their indexed columns,
finding a stored judgement again (task, candidate source, mode, evaluation config) so that
re-judging can be skipped, and the verdict summaries readers need (trial outcomes for the
leaderboard, valid kernels for an archive of solved ops). Mixed into ``Results`` (repo.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from harness.store.db import Store, StoreError, utcnow
from harness.store.records import CandidateOutcome, StoredVerdict, ValidKernel
from sandbox.contract import Verdict

# EvalConfig fields that do not change what a verdict says (so are left out of its key)
_KEY_IGNORES = {"build_dir", "sandbox"}


def config_key(config: Any) -> str:
    """A stable key of an evaluation config (``EvalConfig`` or a dict) for verdict reuse.

    Two evaluations with equal keys, the same task source and the same candidate source are
    the same judgement; the second can reuse the first's stored verdict.
    """
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        d = dataclasses.asdict(config)
    elif isinstance(config, dict):
        d = dict(config)
    else:
        raise TypeError(f"config_key: expected an EvalConfig or dict, got {type(config).__name__}")
    d = {k: (v.value if hasattr(v, "value") else v) for k, v in d.items() if k not in _KEY_IGNORES}
    if d.get("rules", "strict") == "strict":  # keys of strict configs stay those written before --rules
        d.pop("rules", None)
    if not d.get("allow_degenerate"):  # keys stay those written before --allow-degenerate existed
        d.pop("allow_degenerate", None)
    canon = json.dumps(d, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def session_key(key: str, session: int) -> str:
    """The stored config key of an op's final judging session ``session`` (0-based): session 0
    keeps the config's own key (as every final verdict before repeated sessions), later ones
    append ``#s<i>`` so that each is found again on resume and never reused as another's."""
    return key if session == 0 else f"{key}#s{session}"


class VerdictStore:
    store: Store
    path: Path

    # -- verdicts --------------------------------------------------------------------------------
    def add_verdict(
        self,
        verdict: Verdict,
        *,
        candidate_id: int | None = None,
        run_id: str | None = None,
        op: str | None = None,
        task_sha256: str | None = None,
        source_sha256: str | None = None,
        config_key: str | None = None,
    ) -> int:
        """Store a full Verdict plus its indexed columns; returns its verdict id.

        ``run_id``, ``op`` and ``source_sha256`` default to the candidate's; ``task_sha256``
        defaults to the run op's. ``config_key``: see ``config_key()``; give it so that
        ``find_verdict`` can reuse the verdict.
        """
        with self.store.tx() as c:
            if candidate_id is not None:
                cand = c.execute(
                    "SELECT run_id, op, source_sha256 FROM candidates WHERE candidate_id=?",
                    (candidate_id,),
                ).fetchone()
                if cand is None:
                    raise StoreError(
                        f"{self.path}: no candidate {candidate_id}; add_candidate first"
                    )
                run_id = run_id or cand["run_id"]
                op = op or cand["op"]
                source_sha256 = source_sha256 or cand["source_sha256"]
            op = op or verdict.task
            if not op:
                raise StoreError(
                    "add_verdict: give op= (or candidate_id=) to say which op was judged"
                )
            if task_sha256 is None and run_id is not None:
                r = c.execute(
                    "SELECT task_sha256 FROM run_ops WHERE run_id=? AND op=?", (run_id, op)
                ).fetchone()
                task_sha256 = r["task_sha256"] if r else None
            source_sha256 = source_sha256 or verdict.candidate_sha256 or None
            cand_t = verdict.timings.get("candidate")
            sp_e = verdict.speedups.get("eager")
            sp_c = verdict.speedups.get("compile")
            cur = c.execute(
                "INSERT INTO verdicts (candidate_id, run_id, op, mode, status, rule, runtime_us, "
                "speedup_eager, speedup_compile, verdict_json, created_at, task_sha256, source_sha256, "
                "config_key, device, host_timers, rules) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    candidate_id,
                    run_id,
                    op,
                    verdict.mode.value,
                    verdict.status.value,
                    verdict.rule,
                    cand_t.median_us if (cand_t and verdict.valid) else None,
                    sp_e.value if sp_e else None,
                    sp_c.value if sp_c else None,
                    verdict.to_json(),
                    utcnow(),
                    task_sha256,
                    source_sha256,
                    config_key,
                    verdict.device,
                    int(verdict.host_timers),
                    verdict.rules,
                ),
            )
            return int(cur.lastrowid)

    def find_verdict(
        self, task_sha256: str, source_sha256: str, mode: str, config_key: str | None
    ) -> StoredVerdict | None:
        """The latest stored verdict of this exact judgement, or None (then judge it)."""
        mode = getattr(mode, "value", mode)
        rows = self.store.query(
            "SELECT * FROM verdicts WHERE task_sha256=? AND source_sha256=? AND mode=? "
            "AND config_key IS ? ORDER BY verdict_id DESC LIMIT 1",
            (task_sha256, source_sha256, mode, config_key),
        )
        return StoredVerdict.from_row(rows[0]) if rows else None

    def get_verdict(self, verdict_id: int) -> StoredVerdict | None:
        rows = self.store.query("SELECT * FROM verdicts WHERE verdict_id=?", (verdict_id,))
        return StoredVerdict.from_row(rows[0]) if rows else None

    def list_verdicts(
        self, run_id: str, op: str | None = None, mode: str | None = None
    ) -> list[StoredVerdict]:
        sql, args = "SELECT * FROM verdicts WHERE run_id=?", [run_id]
        if op is not None:
            sql += " AND op=?"
            args.append(op)
        if mode is not None:
            sql += " AND mode=?"
            args.append(getattr(mode, "value", mode))
        rows = self.store.query(sql + " ORDER BY verdict_id", tuple(args))
        return [StoredVerdict.from_row(r) for r in rows]

    def candidate_verdict(
        self, candidate_id: int, mode: str, config_key: str | None = None
    ) -> StoredVerdict | None:
        """The first verdict stored for a candidate in ``mode`` (a resumed op reuses it); with
        ``config_key``, the first one stored under that key (a final session, ``session_key``)."""
        sql, args = "SELECT * FROM verdicts WHERE candidate_id=? AND mode=?", [candidate_id, getattr(mode, "value", mode)]
        if config_key is not None:
            sql += " AND config_key=?"
            args.append(config_key)
        rows = self.store.query(sql + " ORDER BY verdict_id LIMIT 1", tuple(args))
        return StoredVerdict.from_row(rows[0]) if rows else None

    def final_sessions(self, run_id: str, candidate_id: int) -> list[StoredVerdict]:
        """The final-mode verdicts of a run's candidate, one per judging session (the first
        stored under each config key), in the order they were judged."""
        rows = self.store.query(
            "SELECT * FROM verdicts WHERE run_id=? AND candidate_id=? AND mode='final' "
            "ORDER BY verdict_id",
            (run_id, candidate_id),
        )
        seen: set[str | None] = set()
        out = []
        for r in rows:
            if r["config_key"] in seen:
                continue
            seen.add(r["config_key"])
            out.append(StoredVerdict.from_row(r))
        return out

    # -- summaries for readers (indexed columns only: stores get large) -----------------------
    def feedback_outcomes(self, run_id: str, op: str) -> list[CandidateOutcome]:
        """Every candidate of a run's op with its latest feedback verdict's status."""
        cands = self.store.query(
            # trial -1 is the op's seed kernel (judged, never one of the method's trials)
            "SELECT candidate_id, parse_error FROM candidates WHERE run_id=? AND op=? AND trial >= 0",
            (run_id, op),
        )
        latest: dict[int, Any] = {}
        for v in self.store.query(
            "SELECT candidate_id, status, host_timers FROM verdicts WHERE run_id=? AND op=? "
            "AND mode='feedback' ORDER BY verdict_id",
            (run_id, op),
        ):
            latest[v["candidate_id"]] = v  # later verdicts of a candidate win
        out = []
        for c in cands:
            v = latest.get(c["candidate_id"])
            out.append(
                CandidateOutcome(
                    candidate_id=c["candidate_id"],
                    parse_error=c["parse_error"],
                    status=v["status"] if v is not None else None,
                    host_timers=bool(v["host_timers"]) if v is not None else False,
                )
            )
        return out

    def valid_kernels(self) -> list[ValidKernel]:
        """Every candidate (non-empty source) with a valid feedback verdict, of every run."""
        rows = self.store.query(
            "SELECT c.run_id, c.op, c.source, c.operator, v.runtime_us, v.speedup_eager, "
            "v.verdict_json FROM verdicts v JOIN candidates c ON c.candidate_id = v.candidate_id "
            "WHERE v.mode = 'feedback' AND v.status = 'valid' AND c.source != '' ORDER BY v.verdict_id"
        )
        return [
            ValidKernel(
                run_id=r["run_id"],
                op=r["op"],
                source=r["source"],
                operator=r["operator"],
                runtime_us=r["runtime_us"],
                speedup_eager=r["speedup_eager"],
                allow_torch_ops=bool(json.loads(r["verdict_json"] or "{}").get("allow_torch_ops")),
            )
            for r in rows
        ]
