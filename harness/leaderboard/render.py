"""Rendering a ``Leaderboard`` to static HTML with the jinja2 templates of ``harness_site``.

Output layout (relative links only, so it works from ``file://`` and any static host)::

    OUT/index.html  pairwise.html  ops.html  provenance.html  leaderboard.json
    OUT/methods/<entry_id>.html   OUT/ops/<op>.html   OUT/static/{style.css,sort.js,pygments.css}
    OUT/rows/<entry_id>/<op>/{kernel.py,verdicts.json,environment.json}

Data is inlined into the pages; nothing is fetched at runtime. Each op row of an entry links
the files under ``rows/``: the exact kernel source, the verdict JSON of every judging session
of its final evaluation (from the results store when the build had it, else the numbers the
leaderboard holds and where the full verdicts are), the environment fingerprint, and the page
shows the one command that re-judges the row (``verify.command``).
"""

from __future__ import annotations

import importlib.resources
import json
import math
import shutil
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from pygments import highlight as _highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from harness.estimate import FASTER, SLOWER, direction_of
from harness.leaderboard import plots
from harness.leaderboard.model import (
    HOST_TIMER_LABEL,
    OFFLINE_LABEL,
    TRACKS,
    BestKernel,
    Entry,
    Leaderboard,
)
from harness.leaderboard.verify import command

REPO_SITE = Path(__file__).resolve().parents[2] / "site"
_FORMATTER = HtmlFormatter(cssclass="hl")


def _loader() -> jinja2.BaseLoader:
    """The templates of this checkout's site/ when there is one (an editable install may map
    harness_site to another checkout: a worktree sharing a venv), else the installed package's."""
    if (REPO_SITE / "templates").is_dir():
        return jinja2.FileSystemLoader(str(REPO_SITE / "templates"))
    try:
        import harness_site  # noqa: F401

        return jinja2.PackageLoader("harness_site", "templates")
    except (ImportError, ValueError):
        return jinja2.FileSystemLoader(str(REPO_SITE / "templates"))


def _static_dir() -> Path:
    if (REPO_SITE / "static").is_dir():
        return REPO_SITE / "static"
    try:
        import harness_site  # noqa: F401

        return Path(str(importlib.resources.files("harness_site") / "static"))
    except ImportError:
        return REPO_SITE / "static"


def fmt(v: Any, kind: str = "num") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if kind == "x":
        return f"{v:.2f}x"
    if kind == "pct":
        return f"{100 * v:.0f}%"
    if kind == "p":
        return "<0.001" if v < 0.001 else f"{v:.3f}"
    if kind == "r":
        return f"{v:+.2f}" if round(v, 2) != 0 else "0.00"
    if kind == "us":
        return f"{v:,.1f} µs"
    if kind == "sol":
        return f"{v:.0f}%"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def sol(k: BestKernel | None) -> float | None:
    """% of speed-of-light of a valid best kernel: the larger of memory and compute."""
    if k is None or k.final_status != "valid" or not k.speed_of_light:
        return None
    vals = [v for v in k.speed_of_light.values() if isinstance(v, (int, float))]
    return max(vals) if vals else None


def highlight(source: str) -> Markup:
    return Markup(_highlight(source, PythonLexer(), _FORMATTER))


def make_env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=_loader(), autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )  # fmt: skip
    env.globals.update(
        fmt=fmt, sol=sol, highlight=highlight, exp=math.exp, row_dir=row_dir, command=command,
        direction_of=direction_of,
        offline_label=OFFLINE_LABEL, host_label=HOST_TIMER_LABEL, faster=FASTER, slower=SLOWER,
    )  # fmt: skip
    return env


def row_dir(entry_id: str, op: str) -> str:
    """The folder (relative to the site's root) of an op row's files."""
    return f"rows/{entry_id}/{op}"


MAX_SAMPLES = 2000  # timing samples kept per measurement in a row's verdicts.json


def _lean(verdict: dict[str, Any]) -> dict[str, Any]:
    """A stored verdict for the site: as stored, but a measurement's raw timing samples beyond
    MAX_SAMPLES are left out (their count kept; the store has them all) so pages stay small."""
    v = dict(verdict)
    timings = {}
    for name, m in (v.get("timings") or {}).items():
        m = dict(m)
        if len(m.get("samples_us") or []) > MAX_SAMPLES:
            m["samples_us_omitted"] = len(m["samples_us"])
            m["samples_us"] = []
        timings[name] = m
    v["timings"] = timings
    return v


def _row_files(out: Path, e: Entry, evidence: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    """kernel.py, verdicts.json and environment.json of every op row of ``e`` with a kernel."""
    for o in e.ops:
        k = o.best
        if k is None:
            continue
        d = out / row_dir(e.entry_id, o.op)
        _write(d / "kernel.py", k.source)
        full = evidence.get((k.run_id, o.op))
        verdicts: Any = [_lean(v) for v in full] if full is not None else {
            "note": "the full verdicts are in the results store; these are the numbers the "
                    "leaderboard holds",
            "run_id": k.run_id, "results_dir": next((r.results_dir for r in e.runs if r.run_id == k.run_id), ""),
            "verdict_ids": list(k.verdict_ids), "final_status": k.final_status,
            "speedups": {b: vars(s) for b, s in k.speedups.items()},
        }  # fmt: skip
        _write(d / "verdicts.json", json.dumps(verdicts, indent=1, default=str))
        _write(d / "environment.json", json.dumps(k.environment, indent=1, sort_keys=True, default=str))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def render_site(
    lb: Leaderboard, out: str | Path, evidence: dict[tuple[str, str], list[dict[str, Any]]] | None = None
) -> list[Path]:
    """Write every page of ``lb`` under ``out``; returns the HTML files written. ``evidence``:
    (run id, op) -> the verdicts of the op's final sessions, as collected from the stores."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    env = make_env()
    static = out / "static"
    static.mkdir(exist_ok=True)
    for f in _static_dir().iterdir():
        if f.is_file():
            shutil.copyfile(f, static / f.name)
    _write(static / "pygments.css", _FORMATTER.get_style_defs(".hl"))
    _write(out / "leaderboard.json", lb.to_json())
    entries = list(lb.entries)
    base = {
        "lb": lb,
        "any_offline": any(e.offline for e in entries),
        "any_host": any(e.host_timers for e in entries),
    }
    written = []

    def page(name: str, template: str, root: str = "", **ctx: Any) -> None:
        html = env.get_template(template).render(root=root, **base, **ctx)
        _write(out / name, html)
        written.append(out / name)

    for e in entries:
        _row_files(out, e, evidence or {})
    labels = {e.entry_id: e.label for e in entries}
    page(
        "index.html", "index.html.j2", page="index", title="Overview", labels=labels,
        tracks=[(rules, [t for t in lb.tables if t.context.get("rules") == rules]) for rules in TRACKS],
        plot_distribution=Markup(plots.speedup_distribution(entries)),
        plot_scatter=Markup(plots.validity_scatter(entries)),
    )  # fmt: skip
    pairs = {(p.a, p.b): p for p in lb.pairwise}

    def cell(a: str, b: str) -> dict[str, Any]:
        p = pairs.get((a, b)) or pairs.get((b, a))
        if p is None:
            return {"p": None, "r": None, "n": 0, "cls": "", "why": "not compared"}
        seeds = (p.seeds_a, p.seeds_b) if p.a == a else (p.seeds_b, p.seeds_a)
        if p.p_holm is None:
            return {"p": None, "r": None, "n": p.n_common, "cls": "", "seeds": seeds,
                    "why": "no differing ops", "words": "no clear difference"}  # fmt: skip
        r = p.rank_biserial if p.a == a else -(p.rank_biserial or 0.0)
        cls = ("win" if r > 0 else "loss") if p.significant else ""
        words = {"win": "row faster", "loss": "column faster", "": "no clear difference"}[cls]
        return {"p": p.p_holm, "r": r, "n": p.n_common, "cls": cls, "seeds": seeds, "words": words}

    ranked = [(t, [e for e in entries if e.table_id == t.table_id and e.complete]) for t in lb.tables]
    page(
        "pairwise.html", "pairwise.html.j2", page="pairwise", title="Pairwise", cell=cell,
        labels=labels, matrices=[(t, es) for t, es in ranked if len(es) > 1],
    )  # fmt: skip
    for e in entries:
        page(
            f"methods/{e.entry_id}.html", "method.html.j2", root="../", page="method", title=e.label,
            e=e, usage={k: round(v, 4) for k, v in sorted(e.usage.items())},
            has_cost=any("cost" in k for k in e.usage),
        )  # fmt: skip
    op_rows = []
    order = {t.table_id: i for i, t in enumerate(lb.tables)}
    titles = {t.table_id: t.title for t in lb.tables}
    for op in lb.ops:
        rows = [(e, o) for e in entries for o in e.ops if o.op == op.op]
        rows.sort(key=lambda eo: (order.get(eo[0].table_id, 99), -eo[1].speedup_eager, eo[0].entry_id))
        # tracks and device classes are never mixed: one best per (strict) device class
        classes: dict[str, list[Any]] = {}
        for e, o in rows:
            if e.rules == "strict":
                classes.setdefault(f"{e.device} on {e.hardware}", []).append((e, o))
        if not classes:
            op_rows.append({"op": op, "where": "partial rules only", "n_entries": 0, "n_valid": 0,
                            "best_entry": None, "best": None, "best_value": None})  # fmt: skip
        for where, members in sorted(classes.items()):
            valid = [(e, o) for e, o in members if o.best is not None and o.best.final_status == "valid"
                     and "eager" in o.best.speedups]  # fmt: skip
            top = max(valid, key=lambda eo: eo[1].best.speedups["eager"].value, default=None)
            top_sp = top[1].best.speedups["eager"] if top else None
            op_rows.append(
                {
                    "op": op, "where": where, "n_entries": len(members), "n_valid": len(valid),
                    "best_entry": top[0] if top else None, "best": top_sp,
                    "best_value": top_sp.value if top_sp else None,
                }
            )  # fmt: skip
        groups = [(tid, titles.get(tid, tid), [(e, o) for e, o in rows if e.table_id == tid])
                  for tid in dict.fromkeys(e.table_id for e, _ in rows)]  # fmt: skip
        page(
            f"ops/{op.op}.html", "op.html.j2", root="../", page="op", title=op.op, op=op,
            rows=rows, groups=groups,
        )  # fmt: skip
    page("ops.html", "ops.html.j2", page="ops", title="Ops", op_rows=op_rows)
    page("provenance.html", "provenance.html.j2", page="provenance", title="Provenance")
    return written
