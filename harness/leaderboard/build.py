"""Aggregating collected runs into one typed ``Leaderboard`` (statistics from harness.stats).

Runs equal in every setting but their seeds (``settings.run_settings``: method, variant, model,
endpoint, budget, method and LLM settings, evaluator overrides, final sessions, rule set,
device, hardware, planned op set) and in the task file of every op they share are the seeds of
one entry. An entry's label shows every setting that tells it apart from another entry of the
same method and model. Entries rank in tables of comparable entries (``tables.py``): same op
set, suite version, device class and rule set. One run: CIs are bootstrap over ops; several:
each metric is the mean over seeds with a t-interval. The ranking key is the geometric mean
over ops of the deployed speedup over eager (max(1, speedup), 1.0 without a valid kernel).
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import __version__
from harness import stats as st
from harness.leaderboard import settings as cfg
from harness.leaderboard.collect import RunData
from harness.leaderboard.model import (
    SCHEMA_VERSION,
    Entry,
    EntryOp,
    Leaderboard,
    OpInfo,
    Provenance,
    RunRef,
    Summary,
)
from harness.leaderboard.tables import pairs, rank_key, ranking_tables
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
    "valid_ops",
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
    return cfg.model_and_endpoint(llm)[0]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80] or "entry"


def _agree(a: dict[str, str], b: dict[str, str]) -> bool:
    """Two op -> task sha maps judged the same task files wherever they share an op."""
    return all(a[op] == b[op] for op in set(a) & set(b))


def group_runs(runs: list[RunData]) -> list[tuple[dict[str, Any], list[RunData]]]:
    """Runs grouped into entries: equal settings, and the same task file for every op shared
    (a changed task file starts a new entry); each group's settings carry its suite version."""
    clusters: dict[str, list[tuple[dict[str, str], list[RunData]]]] = defaultdict(list)
    first: dict[str, dict[str, Any]] = {}
    for r in sorted(runs, key=lambda r: (r.run.created_at, r.run.run_id)):
        s = cfg.run_settings(r.run, hardware=r.hardware, planned_ops=r.planned_ops)
        key = cfg.settings_key(s)
        first.setdefault(key, s)
        for shas, members in clusters[key]:
            if _agree(shas, r.task_shas):
                members.append(r)
                shas.update(r.task_shas)
                break
        else:
            clusters[key].append((dict(r.task_shas), [r]))
    out = []
    for key, groups in clusters.items():
        for shas, members in groups:
            s = dict(first[key])
            planned = [op for op in s["ops"].split(",") if op]
            s["suite_version"] = cfg.digest(sorted((op, shas[op]) for op in planned if op in shas))
            out.append((s, members))
    return out


def _labels(settings: list[dict[str, Any]]) -> list[str]:
    """Each entry's label: its method, variant and model, plus every setting that differs
    among the entries of the same method and model."""
    by: dict[tuple, list[int]] = defaultdict(list)
    for i, s in enumerate(settings):
        by[(s["method"], s["model"])].append(i)
    out = [""] * len(settings)
    for idx in by.values():
        shown = cfg.distinguishing([settings[i] for i in idx])
        for i in idx:
            out[i] = cfg.label(settings[i], shown)
    return out


def _best(per: list[tuple[RunData, Any]], op: str) -> Any:
    """The best seed's kernel for ``op``: the valid one with the highest speedup over eager,
    else any kernel (a failed final), else None."""
    best = None
    for r, o in per:
        cand = r.best.get(op)
        if cand is None:
            continue
        cur = o.speedup("eager")
        if best is None or (cur is not None and (best[1] is None or cur.value > best[1])):
            best = (cand, cur.value if cur else None)
    return best[0] if best else None


def _entry(s: dict[str, Any], label: str, runs: list[RunData], used_ids: set[str]) -> Entry:
    runs = sorted(runs, key=lambda r: (r.run.seed, r.run.run_id))
    eid = _slug(label)
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
    raw = {b: st.entry_op_raw(outs, b) for b in BASELINES}
    ops = []
    for op in sorted(sp["eager"]):
        per = [(r, o) for r in runs for o in r.outcomes if o.op == op]
        ops.append(
            EntryOp(
                op=op, n_runs=len(per), trials=sum(o.trials for _, o in per),
                compiled=sum(o.compiled for _, o in per), correct=sum(o.correct for _, o in per),
                speedup_eager=sp["eager"][op], speedup_compile=sp["compile"][op],
                best=_best(per, op), raw_eager=raw["eager"][op], raw_compile=raw["compile"][op],
                n_valid_runs=sum(o.final_status == "valid" for _, o in per),
            )
        )  # fmt: skip
    usage: dict[str, float] = {}
    for r in runs:
        for k2, v in r.usage.items():
            usage[k2] = usage.get(k2, 0) + v
    first = runs[0].run
    shas: dict[str, str] = {}
    for r in runs:
        shas.update(r.task_shas)
    return Entry(
        entry_id=eid, label=label, method=first.method, variant=s.get("variant"), llm=first.llm,
        offline=all(r.run.llm_offline for r in runs), host_timers=any(r.host_timers for r in runs),
        device=first.device, hardware=s["hardware"], budget=first.budget, config=first.config,
        runs=tuple(
            RunRef(r.run.run_id, r.run.seed, r.run.status, r.run.created_at, r.run.finished_at,
                   r.run.git_commit, r.results_dir, r.hardware, r.run.environment,
                   dict((r.run.config or {}).get("eval_overrides") or {}))
            for r in runs
        ),
        usage=usage, summaries=summaries, run_summaries=run_summaries, ops=tuple(ops),
        rules=first.rules, settings=s, planned_ops=tuple(runs[0].planned_ops),
        complete=all(r.complete for r in runs), task_shas=shas,
        suite=first.suite if first.suite and not first.suite.startswith("ops:") else None,
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


def build_leaderboard(runs: list[RunData], dirs: list[str]) -> Leaderboard:
    groups = group_runs(runs)
    labels = _labels([s for s, _ in groups])
    used: set[str] = set()
    entries = [_entry(s, lab, members, used) for (s, members), lab in zip(groups, labels, strict=True)]
    entries.sort(key=rank_key)
    entries, tables = ranking_tables(entries)
    return Leaderboard(
        schema_version=SCHEMA_VERSION,
        provenance=_provenance(runs, dirs),
        primary_baseline="eager",
        entries=tuple(entries),
        ops=_op_infos(runs),
        pairwise=pairs(entries),
        tables=tables,
    )
