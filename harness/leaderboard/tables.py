"""Ranking tables of comparable entries, and the pairwise comparisons inside each.

A table holds the entries judged on the same op set, suite version (the task files of its ops),
device class (device and hardware) and rule set, and states them (``Table.context``). Its
ranked rows are the entries that finished every op of the set, by the geometric mean over ops
of the deployed speedup over eager (``rank_key``: ties by the share of valid ops); an entry with fewer finished ops is listed under the table,
not ranked. Each rule set (track) has at least one table, empty when no run used it. Pairs are
compared only inside a table, Holm-corrected over all pairs compared.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import asdict
from typing import Any

from harness import stats as st
from harness.leaderboard.model import TRACKS, Column, Entry, Pair, Table
from harness.leaderboard.settings import digest

OVERVIEW_COLUMNS = (
    Column("rank", "#", lower_is_better=True, kind="number"),
    Column("entry", "Method", kind="link"),
    Column("runs", "Seeds", kind="number", help="independent runs (seeds) behind the entry's numbers"),
    Column("geomean", "Geomean speedup vs eager", False, "interval",
           "ranking key: geometric mean over the table's ops of max(1, speedup) of the final valid "
           "kernel, 1 where there is none (what a user would deploy)"),
    Column("median", "Median speedup vs eager", False, "interval",
           "median over ops of the same deployed speedup"),
    Column("geomean_raw", "Geomean raw speedup (valid ops)", False, "interval",
           "geometric mean of the unclamped speedup over the ops with a valid final kernel"),
    Column("valid_ops", "Valid ops", False, "percent", "share of ops whose final kernel is valid"),
    Column("fast_1", "fast_1", False, "percent",
           "share of ops whose final kernel is valid and faster than eager (95% interval above 1)"),
    Column("fast_2", "fast_2", False, "percent",
           "share of ops whose final kernel is valid with its 95% interval above 2"),
    Column("correct_rate", "Correct trials", False, "percent", "valid feedback verdicts / all trials"),
    Column("compiled_rate", "Compiling trials", False, "percent"),
    Column("geomean_compile", "Geomean vs torch.compile", False, "interval"),
)  # fmt: skip

NOTE = ("95% CIs: bootstrap over ops for one seed, t-interval over seeds otherwise. Per-op speedups "
        "behind these numbers are over the final kernel's judging sessions (docs/metrics.md).")


def rank_key(e: Entry) -> tuple:
    """The ranking order: the geometric mean of the deployed speedup over eager, highest first;
    ties broken by the share of valid ops, then the raw geometric mean, then the entry id."""
    s = e.summaries["eager"]
    return (-(s.geomean.value or 0), -(s.valid_ops.value or 0), -(s.geomean_raw.value or 0), e.entry_id)


def _agree(a: dict[str, str], b: dict[str, str]) -> bool:
    return all(a[op] == b[op] for op in set(a) & set(b))


def _row(rank: int | None, e: Entry) -> dict[str, Any]:
    s, c = e.summaries["eager"], e.summaries["compile"]
    return {
        "rank": rank, "entry": e.entry_id, "label": e.label, "badges": e.badges,
        "runs": len(e.runs), "ops": s.n_ops, "ci_kind": s.ci_kind,
        "geomean": asdict(s.geomean), "median": asdict(s.median),
        "geomean_raw": asdict(s.geomean_raw), "valid_ops": asdict(s.valid_ops),
        "geomean_compile": asdict(c.geomean),
        "fast_1": asdict(s.fast_1), "fast_2": asdict(s.fast_2),
        "correct_rate": asdict(s.correct_rate), "compiled_rate": asdict(s.compiled_rate),
    }  # fmt: skip


def _title(ctx: dict[str, Any]) -> str:
    ops = ctx["ops"]
    what = f"{len(ops)} op{'s' if len(ops) != 1 else ''}" + (f" ({ctx['suite']})" if ctx.get("suite") else f": {', '.join(ops)}"
                                if len(ops) <= 6 else "")
    rules = "strict rules" if ctx["rules"] == "strict" else "partial rules"
    return f"Ranking, {rules} · {what} · {ctx['device']} on {ctx['hardware']} · suite version {ctx['suite_version']}"


def ranking_tables(entries: list[Entry]) -> tuple[list[Entry], tuple[Table, ...]]:
    """(entries with their table id, the tables): one table per comparable set, ranked."""
    sets: dict[tuple, list[tuple[dict[str, str], list[Entry]]]] = defaultdict(list)
    for e in entries:
        key = (e.rules, e.device, e.hardware, tuple(e.planned_ops))
        for shas, members in sets[key]:
            if _agree(shas, e.task_shas):
                members.append(e)
                shas.update(e.task_shas)
                break
        else:
            sets[key].append((dict(e.task_shas), [e]))
    found: list[tuple[dict[str, Any], list[Entry]]] = []
    for (rules, device, hardware, ops), groups in sets.items():
        for shas, members in groups:
            ctx = {"rules": rules, "device": device, "hardware": hardware, "ops": list(ops),
                   "suite_version": digest(sorted((op, shas[op]) for op in ops if op in shas)),
                   "suite": _suite_of(members)}  # fmt: skip
            found.append((ctx, members))
    # per track: the table with the most ranked entries keeps the track's id
    found.sort(key=lambda cm: (-sum(e.complete for e in cm[1]), -len(cm[0]["ops"]), cm[0]["suite_version"]))
    tables: list[Table] = []
    table_of: dict[str, str] = {}
    used: set[str] = set()
    for ctx, members in found:
        base, _ = TRACKS[ctx["rules"]]
        tid = base if base not in used else f"{base}-{digest([ctx[k] for k in sorted(ctx)], 6)}"
        used.add(tid)
        ranked = sorted((e for e in members if e.complete), key=rank_key)
        rows = tuple(_row(i, e) for i, e in enumerate(ranked, 1))
        unranked = tuple(
            {**_row(None, e), "reason": _why_unranked(e)} for e in members if not e.complete
        )
        tables.append(Table(tid, _title(ctx), OVERVIEW_COLUMNS, rows, NOTE, ctx, unranked))
        for e in members:
            table_of[e.entry_id] = tid
    for rules, (tid, title) in TRACKS.items():
        if tid not in used:
            tables.append(Table(tid, title, OVERVIEW_COLUMNS, (), NOTE, {"rules": rules}))
    order = list(TRACKS)
    tables.sort(key=lambda t: (order.index(t.context["rules"]), t.table_id != TRACKS[t.context["rules"]][0]))
    out = [dataclasses.replace(e, table_id=table_of[e.entry_id]) for e in entries]
    return out, tuple(tables)


def _suite_of(members: list[Entry]) -> str | None:
    """The suite name the entries' runs named, when they all named the same one."""
    names = {e.suite or "" for e in members}
    return names.pop() or None if len(names) == 1 else None


def _why_unranked(e: Entry) -> str:
    done = {o.op for o in e.ops if o.n_runs == len(e.runs)}
    missing = [op for op in e.planned_ops if op not in done]
    return (f"not ranked: {len(e.planned_ops) - len(missing)} of {len(e.planned_ops)} ops finished "
            f"in every seed (missing: {', '.join(missing[:6])}{'…' if len(missing) > 6 else ''})")  # fmt: skip


def pairs(entries: list[Entry]) -> tuple[Pair, ...]:
    """Pairs of ranked entries of the same table, Holm-corrected over all pairs compared."""
    ranked = [e for e in entries if e.complete]
    data = {e.entry_id: {o.op: o.speedup_eager for o in e.ops} for e in ranked}
    table = {e.entry_id: e.table_id for e in ranked}
    seeds = {e.entry_id: len(e.runs) for e in ranked}
    same = st.pairwise(data, comparable=lambda a, b: table[a] == table[b])
    return tuple(Pair(**vars(p), table_id=table[p.a], seeds_a=seeds[p.a], seeds_b=seeds[p.b])
                 for p in same)  # fmt: skip
