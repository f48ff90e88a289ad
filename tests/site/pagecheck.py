"""Headless Chromium helpers for the site tests (Debian's /usr/bin/chromium via Playwright)."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

needs_chromium = [
    pytest.mark.chromium,
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None,
        reason=f"{CHROMIUM} not installed (apt-get install chromium)",
    ),
]


def open_page(browser, url):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.goto(url)
    page.wait_for_load_state("load")
    return page, problems


def check_all_pages(browser, site: Path, pages: list[Path] | None = None) -> int:
    """Every page (or those given) loads from file:// without console errors; every link
    resolves to a file."""
    pages = pages or sorted(site.rglob("*.html"))
    for f in pages:
        page, problems = open_page(browser, f.as_uri())
        assert page.title(), f
        assert problems == [], f"{f.relative_to(site)}: {problems}"
        refs = page.eval_on_selector_all(
            "a[href], link[href], script[src]", "els => els.map(e => e.href || e.src)"
        )
        for h in refs:
            if h.startswith("data:"):
                continue
            u = urlparse(h)
            assert u.scheme == "file", f"{f}: non-local link {h}"
            assert Path(unquote(u.path)).is_file(), f"{f.relative_to(site)}: {h} does not resolve"
        page.close()
    return len(pages)


def sort_values(page, table_sel: str, col: int) -> list[float]:
    return page.eval_on_selector_all(
        f"{table_sel} tbody tr",
        f"rows => rows.map(r => r.cells[{col}].dataset.sort === '' ? null : Number(r.cells[{col}].dataset.sort))",
    )


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / name
    page.screenshot(path=str(out), full_page=True)
    return out
