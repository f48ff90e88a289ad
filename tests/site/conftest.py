"""Shared fixtures for the leaderboard tests: a filled store and a site built from it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from harness.cli import main
from tests.store.fill_store import fill


@pytest.fixture(scope="session")
def filled_results(tmp_path_factory):
    d = tmp_path_factory.mktemp("lb_results")
    fill(d).close()
    return d


@pytest.fixture(scope="session")
def built_site(filled_results, tmp_path_factory):
    out = tmp_path_factory.mktemp("lb_site")
    res = CliRunner().invoke(
        main, ["leaderboard", "build", "--results", str(filled_results), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="session")
def browser():
    from tests.site.pagecheck import ARGS, CHROMIUM

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
