"""Aggregating collected runs into one typed ``Leaderboard`` (statistics from harness.stats).

Runs group into entries by (method, variant, LLM, device, hardware, rule set); an entry's runs
are its seeds. Each rule set is a track with its own ranking table (strict: ``overview``,
partial: ``overview_partial``); entries of different tracks are never ranked or compared together. One run: CIs are bootstrap over ops; several: each metric is the mean over seeds
with a t-interval. Entries rank by the geometric-mean speedup over eager (fallback 1.0).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from harness import __version__
from harness import stats as st
from harness.leaderboard.collect import RunData
from harness.leaderboard.model import (
    SCHEMA_VERSION,
    TRACKS,
    Column,
    Entry,
    EntryOp,
    Leaderboard,
    OpInfo,
    Pair,
    Provenance,
    RunRef,
    Summary,
    Table,
)
from harness.store import fingerprint

BASELINES = ("eager", "compile")
SPEEDUP_METRICS = ("median", "geomean", "median_raw", "geomean_raw")
METRICS = (
    "compiled_rate",
    "correct_rate",
    "median",
    "geomean",
    "median_raw",
    "geomean_raw",
    "fast_1",
    "fast_2",
)


def _summary(s: st.RunSummary, kind: str = "bootstrap over ops") -> Summary:
    return Summary(s.baseline, kind, s.n_ops, s.n_valid_ops, *(getattr(s, m) for m in METRICS))


def _seeds_summary(per_run: list[st.RunSummary], baseline: str) -> Summary:
    if len(per_run) == 1:
        return _summary(per_run[0])
    vals = {}
    for m in METRICS:
        xs = [getattr(s, m).value for s in per_run]
        if m in SPEEDUP_METRICS:
            vals[m] = st.mean_ci(xs, log=True)
        else:
            vals[m] = st.mean_ci(xs, bounds=(0.0, 1.0))
    return Summary(
        baseline, f"t over {len(per_run)} seeds",
        round(sum(s.n_ops for s in per_run) / len(per_run)),
        round(sum(s.n_valid_ops for s in per_run) / len(per_run)),
        *(vals[m] for m in METRICS),
    )  # fmt: skip


def short_llm(llm: str) -> str:
    """The model names of an LLM spec without endpoints: "m@https://host/v1" -> "m"."""
    return ",".join(part.split("@")[0].strip() for part in llm.split(","))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "entry"


def _group(runs: list[RunData]) -> dict[tuple, list[RunData]]:
    groups: dict[tuple, list[RunData]] = defaultdict(list)
    for r in runs:
        key = (r.run.method, r.run.variant, r.run.llm, r.run.device, r.hardware, r.run.rules)
        groups[key].append(r)
    return groups


def _entry(key: tuple, runs: list[RunData], used_ids: set[str]) -> Entry:
    method, variant, llm, device, hardware, rules = key
    runs = sorted(runs, key=lambda r: (r.run.seed, r.run.run_id))
    short_variant = variant if not variant or len(variant) <= 24 else variant[:23] + "…"
    label = method + (f" ({short_variant})" if variant else "") + f" · {short_llm(llm)}"
    label += " [partial rules]" if rules == "partial" else ""
    eid = _slug(f"{method}-{variant or ''}-{llm.split('@')[0]}-{device}" + ("-partial" if rules == "partial" else ""))
    base, k = eid, 2
    while eid in used_ids:
        eid, k = f"{base}-{k}", k + 1
    used_ids.add(eid)
    summaries = {
        b: _seeds_summary([st.summarize_run(r.outcomes, b) for r in runs], b) for b in BASELINES
    }
    run_summaries = {r.run.run_id: _summary(st.summarize_run(r.outcomes, "eager")) for r in runs}
    outs = [r.outcomes for r in runs]
    sp = {b: st.entry_op_speedups(outs, b) for b in BASELINES}
    ops = []
    for op in sorted(sp["eager"]):
        per = [(r, o) for r in runs for o in r.outcomes if o.op == op]
        best = None
        for r, o in per:
            cand = r.best.get(op)
            if cand is None:
                continue
            cur = o.speedup("eager")
            if best is None or (cur is not None and (best[1] is None or cur.value > best[1])):
                best = (cand, cur.value if cur else None)
        ops.append(
            EntryOp(
                op=op, n_runs=len(per), trials=sum(o.trials for _, o in per),
                compiled=sum(o.compiled for _, o in per), correct=sum(o.correct for _, o in per),
                speedup_eager=sp["eager"][op], speedup_compile=sp["compile"][op],
                best=best[0] if best else None,
            )
        )  # fmt: skip
    usage: dict[str, float] = {}
    for r in runs:
        for k2, v in r.usage.items():
            usage[k2] = usage.get(k2, 0) + v
    first = runs[0].run
    return Entry(
        entry_id=eid, label=label, method=method, variant=variant, llm=llm,
        offline=all(r.run.llm_offline for r in runs), host_timers=any(r.host_timers for r in runs),
        device=device, hardware=hardware, budget=first.budget, config=first.config,
        runs=tuple(
            RunRef(r.run.run_id, r.run.seed, r.run.status, r.run.created_at, r.run.finished_at,
                   r.run.git_commit, r.results_dir, r.hardware, r.run.environment,
                   dict((r.run.config or {}).get("eval_overrides") or {}))
            for r in runs
        ),
        usage=usage, summaries=summaries, run_summaries=run_summaries, ops=tuple(ops), rules=rules,
    )  # fmt: skip


def _op_infos(runs: list[RunData]) -> tuple[OpInfo, ...]:
    """Each op's description as stored with its latest run; the task file's, found in the
    reference suite, only for ops whose stores predate op metadata (schema v3)."""
    from harness.leaderboard.tasks import describe_op

    shas: dict[str, set[str]] = defaultdict(set)
    stored: dict[str, dict[str, str]] = {}
    for r in sorted(runs, key=lambda r: (r.run.created_at, r.run.run_id)):
        for o in r.outcomes:
            kernel = r.best.get(o.op)
            shas[o.op].update([kernel.task_sha256] if kernel else [])
            m = r.op_meta.get(o.op)
            if m is not None:  # a later run's metadata wins
                stored[o.op] = {
                    "category": m.category,
                    "description": m.description,
                    "dtype": m.dtype,
                }
    return tuple(
        OpInfo(op=op, task_sha256s=tuple(sorted(s)), **(stored.get(op) or describe_op(op)))
        for op, s in sorted(shas.items())
    )


def _provenance(runs: list[RunData], dirs: list[str]) -> Provenance:
    created = sorted(r.run.created_at for r in runs)
    env = fingerprint.environment(probe_torch=False)
    return Provenance(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        git_describe=fingerprint.git_describe(),
        git_commit=fingerprint.git_commit(),
        harness_version=__version__,
        python=env.get("python", ""),
        platform=env.get("platform", ""),
        packages=env.get("packages", {}),
        builder_hardware=fingerprint.hardware_label(env),
        run_hardware=tuple(sorted({r.hardware for r in runs})),
        run_commits=tuple(sorted({r.run.git_commit for r in runs if r.run.git_commit})),
        results_dirs=tuple(str(Path(d)) for d in dirs),
        first_run=created[0] if created else None,
        last_run=created[-1] if created else None,
    )


def _pairs(entries: list[Entry]) -> tuple[Pair, ...]:
    """Pairs of entries measured on the same hardware and device under the same rule set
    (speedups from different machines or tracks are not comparable), Holm-corrected over those."""
    data = {e.entry_id: {o.op: o.speedup_eager for o in e.ops} for e in entries}
    where = {e.entry_id: (e.hardware, e.device, e.rules) for e in entries}
    same = st.pairwise(data, comparable=lambda a, b: where[a] == where[b])
    return tuple(Pair(**vars(p)) for p in same)


OVERVIEW_COLUMNS = (
    Column("rank", "#", lower_is_better=True, kind="number"),
    Column("entry", "Method", kind="link"),
    Column("runs", "Seeds", kind="number"),
    Column("ops", "Ops", kind="number"),
    Column("geomean", "Geomean speedup vs eager", False, "interval",
           "geometric mean over ops; an op without a valid kernel counts as 1.0"),
    Column("median", "Median speedup vs eager", False, "interval"),
    Column("geomean_raw", "Geomean (valid ops only)", False, "interval"),
    Column("geomean_compile", "Geomean vs torch.compile", False, "interval"),
    Column("fast_1", "fast_1", False, "percent", "share of ops significantly faster than eager"),
    Column("fast_2", "fast_2", False, "percent", "share of ops with speedup CI lower bound > 2"),
    Column("correct_rate", "Correct trials", False, "percent"),
    Column("compiled_rate", "Compiling trials", False, "percent"),
)  # fmt: skip


def _overview(entries: list[Entry], rules: str = "strict") -> Table:
    """The ranking of one track: only entries judged under ``rules``, ranked among themselves."""
    entries = [e for e in entries if e.rules == rules]
    rows = []
    for i, e in enumerate(entries, 1):
        s, c = e.summaries["eager"], e.summaries["compile"]
        rows.append(
            {
                "rank": i, "entry": e.entry_id, "label": e.label, "badges": e.badges,
                "runs": len(e.runs), "ops": s.n_ops, "ci_kind": s.ci_kind,
                "geomean": asdict(s.geomean), "median": asdict(s.median),
                "geomean_raw": asdict(s.geomean_raw), "geomean_compile": asdict(c.geomean),
                "fast_1": asdict(s.fast_1), "fast_2": asdict(s.fast_2),
                "correct_rate": asdict(s.correct_rate), "compiled_rate": asdict(s.compiled_rate),
            }
        )  # fmt: skip
    table_id, title = TRACKS[rules]
    return Table(table_id, title, OVERVIEW_COLUMNS, tuple(rows),
                 note="95% CIs: bootstrap over ops for one seed, t-interval over seeds otherwise.")  # fmt: skip


def build_leaderboard(runs: list[RunData], dirs: list[str]) -> Leaderboard:
    used: set[str] = set()
    entries = [_entry(k, v, used) for k, v in _group(runs).items()]
    entries.sort(key=lambda e: (-(e.summaries["eager"].geomean.value or 0), e.entry_id))
    return Leaderboard(
        schema_version=SCHEMA_VERSION,
        provenance=_provenance(runs, dirs),
        primary_baseline="eager",
        entries=tuple(entries),
        ops=_op_infos(runs),
        pairwise=_pairs(entries),
        tables=tuple(_overview(entries, rules) for rules in TRACKS),
    )
