"""The built site in a real headless Chromium (Debian's /usr/bin/chromium via Playwright):
pages load from file:// without console errors, sorting works, links resolve, screenshot."""

from __future__ import annotations

from tests.site.pagecheck import check_all_pages, needs_chromium, open_page, screenshot, sort_values

pytestmark = needs_chromium


def test_every_page_loads_from_file_url_without_console_errors_and_links_resolve(
    browser, built_site
):
    assert check_all_pages(browser, built_site) >= 12


def _column(page, table_id: str, col: int) -> list[str]:
    return page.eval_on_selector_all(
        f"#{table_id} tbody tr", f"rows => rows.map(r => r.cells[{col}].textContent.trim())"
    )


def test_clicking_overview_headers_sorts_the_ranking(browser, built_site):
    page, problems = open_page(browser, (built_site / "index.html").as_uri())
    page.click("#overview thead th[data-key=entry]")
    asc = _column(page, "overview", 1)
    assert len(asc) == 2 and asc == sorted(asc, key=str.lower)
    page.click("#overview thead th[data-key=entry]")
    assert _column(page, "overview", 1) == asc[::-1]
    page.click("#overview thead th[data-key=correct_rate]")
    vals = sort_values(page, "#overview", 10)
    assert vals == sorted(vals, reverse=True)  # higher is better: best first
    assert (
        page.get_attribute("#overview thead th[data-key=correct_rate]", "aria-sort") == "descending"
    )
    assert problems == []
    page.close()


def test_overview_screenshot_is_saved_as_a_test_artifact(browser, built_site):
    page, _ = open_page(browser, (built_site / "index.html").as_uri())
    out = screenshot(page, "overview.png")
    assert out.stat().st_size > 10_000
    page.close()
