"""Every relative link in the reader's markdown points to a file that exists.

Checked: README.md, CONTRIBUTING.md and docs/**/*.md (the reference pages and the dated records
under docs/records/). A link is ``[text](target)`` or ``![alt](target)`` outside fenced code
blocks and inline code spans, or a reference definition ``[name]: target``. Web links
(``http(s)://``, ``mailto:``) and pure ``#anchor`` links are not checked; a ``#anchor`` or
``?query`` suffix is stripped before the path is resolved against the page's own folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "CONTRIBUTING.md"]

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+[\"'(][^)]*)?\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...


def pages() -> list[Path]:
    found = [REPO / p for p in PAGES if (REPO / p).exists()]
    return found + sorted((REPO / "docs").rglob("*.md"))


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link outside code."""
    out, fenced = [], None
    for no, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fenced is None:
                fenced = m.group(1)
            elif m.group(1) == fenced:
                fenced = None
            continue
        if fenced is not None:
            continue
        line = CODE_SPAN.sub("", line)
        targets = [m.group(1) for m in INLINE.finditer(line)]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        out += [(no, t.strip("<>")) for t in targets]
    return out


def broken(page: Path) -> list[str]:
    bad = []
    for no, target in links(page.read_text(encoding="utf-8")):
        if not target or target.startswith("#") or EXTERNAL.match(target):
            continue
        path = unquote(re.split(r"[#?]", target, maxsplit=1)[0])
        if not path:
            continue
        resolved = (REPO / path.lstrip("/")) if path.startswith("/") else (page.parent / path)
        if not resolved.exists():
            bad.append(f"{page.relative_to(REPO)}:{no}: {target}")
    return bad


def test_the_link_parser_sees_links_and_skips_code():
    text = ("[a](x.md) ![b](img/y.png \"t\") [c](https://e.org) [d](#top) `[e](no.md)`\n"
            "```\n[f](no.md)\n```\n[g]: ref.md#part\n")
    assert [t for _, t in links(text)] == ["x.md", "img/y.png", "https://e.org", "#top", "ref.md#part"]


def test_every_relative_markdown_link_points_to_a_file():
    bad = [b for page in pages() for b in broken(page)]
    assert not bad, "links to files that do not exist:\n" + "\n".join(bad)
