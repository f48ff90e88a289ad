"""Inline SVG plots for the leaderboard (no JS, no external assets, readable from file://).

* ``speedup_distribution``: per entry, one dot per op on a log2 axis of the deployed speedup
  (max(1, speedup), 1.0 without a valid kernel), the geometric mean as a bar; ops without a
  valid kernel are hollow dots at 1.0.
* ``validity_scatter``: correct-trial rate (x) against geometric-mean speedup (y, log), one
  point per entry with 95% CI whiskers on both axes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from html import escape

from harness.leaderboard.model import Entry

PALETTE = ["#1f6feb", "#d1242f", "#1a7f37", "#8250df", "#bf8700", "#0a7ea4", "#cf222e", "#57606a"]


def _log_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    return [2.0**k for k in range(a, b + 1)]


def _range(values: list[float]) -> tuple[float, float]:
    vals = [v for v in values if v and v > 0] or [1.0]
    lo, hi = min(min(vals), 1.0), max(max(vals), 1.0)
    lo, hi = 2 ** math.floor(math.log2(lo)), 2 ** math.ceil(math.log2(hi))
    if lo == hi:
        lo, hi = lo / 2, hi * 2
    return lo, hi


def short_label(text: str, n: int = 38) -> str:
    """A label that fits ``n`` characters: without its variant in parentheses where that is
    enough (the full label is the mark's tooltip), else cut in its middle, so that the method at
    its start and the settings at its end (budget=...) stay readable."""
    if len(text) <= n:
        return text
    plain = re.sub(r" \([^)]*\)", "", text, count=1)
    if len(plain) <= n:
        return plain
    head = n // 2 - 2
    return text[:head] + "…" + text[-(n - head - 1):]


def _tick_label(t: float) -> str:
    return f"{t:g}x" if t >= 1 else f"1/{1 / t:g}x"


def _log_grid(lo: float, hi: float, line: Callable[[float], str],
              text: Callable[[float], str]) -> list[str]:
    """A log2 speedup axis: per power-of-two tick ``t`` a grid line (darker at 1x) and a label,
    placed by the coordinate attributes ``line(t)`` and ``text(t)``."""
    out = []
    for t in _log_ticks(lo, hi):
        stroke = "#888" if t == 1 else "#e3e6ea"
        out += [f'<line {line(t)} stroke="{stroke}"/>', f"<text {text(t)}>{_tick_label(t)}</text>"]
    return out


def speedup_distribution(entries: list[Entry], width: int = 640) -> str:
    left, right, row_h, top = 250, 20, 30, 20
    height = top + row_h * max(1, len(entries)) + 40
    values = [o.speedup_eager for e in entries for o in e.ops]
    lo, hi = _range(values)
    span = math.log2(hi) - math.log2(lo)

    def x(v: float) -> float:
        return left + (math.log2(v) - math.log2(lo)) / span * (width - left - right)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="speedup distribution per method">'
    ]
    axis_y = top + row_h * max(1, len(entries)) + 5
    out += _log_grid(lo, hi, lambda t: f'x1="{x(t):.1f}" y1="{top - 5}" x2="{x(t):.1f}" y2="{axis_y}"',
                     lambda t: f'x="{x(t):.1f}" y="{axis_y + 14}" text-anchor="middle"')
    out.append(
        f'<text x="{(left + width - right) / 2:.0f}" y="{axis_y + 30}" text-anchor="middle">'
        "speedup over PyTorch eager (log scale)</text>"
    )
    for i, e in enumerate(entries):
        cy = top + row_h * i + row_h / 2
        color = PALETTE[i % len(PALETTE)]
        out.append(
            f'<text x="{left - 8}" y="{cy + 4:.1f}" text-anchor="end">{escape(short_label(e.label))}'
            f"<title>{escape(e.label)}</title></text>"
        )
        for j, o in enumerate(e.ops):
            valid = o.best is not None and o.best.final_status == "valid"
            jitter = ((j * 7) % 11 - 5) * 1.3
            fill = color if valid else "none"
            out.append(
                f'<circle cx="{x(o.speedup_eager):.1f}" cy="{cy + jitter:.1f}" r="3.5" fill="{fill}" '
                f'stroke="{color}" fill-opacity="0.7"><title>{escape(o.op)}: deployed '
                f"{o.speedup_eager:.2f}x{'' if valid else ' (no valid kernel)'}</title></circle>"
            )
        g = e.summaries["eager"].geomean.value
        if g:
            out.append(
                f'<line x1="{x(g):.1f}" y1="{cy - 11:.1f}" x2="{x(g):.1f}" y2="{cy + 11:.1f}" '
                f'stroke="{color}" stroke-width="3"><title>geomean {g:.2f}x</title></line>'
            )
    out.append("</svg>")
    return "\n".join(out)


def validity_scatter(entries: list[Entry], width: int = 460, height: int = 320) -> str:
    left, right, top, bottom = 55, 20, 15, 45
    gms = [e.summaries["eager"].geomean for e in entries]
    ys = [v for g in gms for v in (g.value, g.ci_low, g.ci_high) if v]
    lo, hi = _range(ys)
    span = math.log2(hi) - math.log2(lo)

    def px(rate: float) -> float:
        return left + rate * (width - left - right)

    def py(v: float) -> float:
        v = min(max(v, lo), hi)
        return top + (1 - (math.log2(v) - math.log2(lo)) / span) * (height - top - bottom)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="validity against speedup">'
    ]
    for k in range(0, 11, 2):
        xt = px(k / 10)
        out.append(
            f'<line x1="{xt:.1f}" y1="{top}" x2="{xt:.1f}" y2="{height - bottom}" stroke="#e3e6ea"/>'
        )
        out.append(
            f'<text x="{xt:.1f}" y="{height - bottom + 14}" text-anchor="middle">{k * 10}%</text>'
        )
    out += _log_grid(lo, hi, lambda t: f'x1="{left}" y1="{py(t):.1f}" x2="{width - right}" y2="{py(t):.1f}"',
                     lambda t: f'x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end"')
    out.append(
        f'<text x="{(left + width - right) / 2:.0f}" y="{height - 8}" text-anchor="middle">'
        "correct trials (share of all trials)</text>"
    )
    out.append(
        f'<text x="14" y="{(top + height - bottom) / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + height - bottom) / 2:.0f})">geomean speedup</text>'
    )
    for i, e in enumerate(entries):
        s = e.summaries["eager"]
        g, r = s.geomean, s.correct_rate
        if g.value is None or r.value is None:
            continue
        color = PALETTE[i % len(PALETTE)]
        cx, cy = px(r.value), py(g.value)
        if g.ci_low is not None:
            out.append(
                f'<line x1="{cx:.1f}" y1="{py(g.ci_low):.1f}" x2="{cx:.1f}" y2="{py(g.ci_high):.1f}" stroke="{color}"/>'
            )
        if r.ci_low is not None:
            out.append(
                f'<line x1="{px(r.ci_low):.1f}" y1="{cy:.1f}" x2="{px(r.ci_high):.1f}" y2="{cy:.1f}" stroke="{color}"/>'
            )
        out.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{color}"><title>{escape(e.label)}: '
            f"{r.value:.0%} correct, {g.value:.2f}x</title></circle>"
        )
        right_side = cx < width - right - 90
        anchor, tx = ("start", cx + 7) if right_side else ("end", cx - 7)
        out.append(
            f'<text x="{tx:.1f}" y="{cy - 6 + 18 * (i % 2):.1f}" text-anchor="{anchor}">'  # alternate above/below
            f"{escape(short_label(e.label, 26))}</text>"
        )
    out.append("</svg>")
    return "\n".join(out)
