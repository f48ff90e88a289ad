"""The built site in a real headless Chromium (Debian's /usr/bin/chromium via Playwright):
pages load from file:// without console errors, sorting works, links resolve, screenshot."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(
        shutil.which(CHROMIUM) is None,
        reason=f"{CHROMIUM} not installed (apt-get install chromium)",
    ),
]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


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


def test_every_page_loads_from_file_url_without_console_errors_and_links_resolve(
    browser, built_site
):
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) >= 12
    for f in pages:
        page, problems = open_page(browser, f.as_uri())
        assert page.title(), f
        assert problems == [], f"{f.relative_to(built_site)}: {problems}"
        refs = page.eval_on_selector_all(
            "a[href], link[href], script[src]", "els => els.map(e => e.href || e.src)"
        )
        for h in refs:
            if h.startswith("data:"):
                continue
            u = urlparse(h)
            assert u.scheme == "file", f"{f}: non-local link {h}"
            assert Path(unquote(u.path)).is_file(), (
                f"{f.relative_to(built_site)}: {h} does not resolve"
            )
        page.close()


def _column(page, table_id: str, col: int) -> list[str]:
    return page.eval_on_selector_all(
        f"#{table_id} tbody tr", f"rows => rows.map(r => r.cells[{col}].textContent.trim())"
    )


def test_clicking_overview_headers_sorts_the_ranking(browser, built_site):
    page, problems = open_page(browser, (built_site / "index.html").as_uri())
    before = _column(page, "overview", 1)
    page.click("#overview thead th[data-key=entry]")
    asc = _column(page, "overview", 1)
    assert asc != before and asc == sorted(asc, key=str.lower)
    page.click("#overview thead th[data-key=entry]")
    assert _column(page, "overview", 1) == asc[::-1]
    page.click("#overview thead th[data-key=correct_rate]")
    vals = page.eval_on_selector_all(
        "#overview tbody tr", "rows => rows.map(r => Number(r.cells[10].dataset.sort))"
    )
    assert vals == sorted(vals, reverse=True)  # higher is better: best first
    assert (
        page.get_attribute("#overview thead th[data-key=correct_rate]", "aria-sort") == "descending"
    )
    assert problems == []
    page.close()


def test_overview_screenshot_is_saved_as_a_test_artifact(browser, built_site):
    page, _ = open_page(browser, (built_site / "index.html").as_uri())
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / "overview.png"
    page.screenshot(path=str(out), full_page=True)
    assert out.stat().st_size > 10_000
    page.close()
