"""The static site: every page exists, links are relative and resolve, labels are visible."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest
from click.testing import CliRunner

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("href", "src") and v is not None:
                self.refs.append(v)


def links(page: Path) -> list[str]:
    p = _Links()
    p.feed(page.read_text())
    return p.refs


def test_site_has_overview_pairwise_method_op_and_provenance_pages(built_site):
    for name in (
        "index.html",
        "pairwise.html",
        "ops.html",
        "provenance.html",
        "leaderboard.json",
        "static/style.css",
        "static/sort.js",
        "static/pygments.css",
    ):
        assert (built_site / name).is_file(), name
    assert len(list((built_site / "methods").glob("*.html"))) == 3
    assert {p.stem for p in (built_site / "ops").glob("*.html")} == {
        "relu",
        "softmax",
        "sum_dim",
        "matmul_square",
        "layer_norm",
    }


def test_every_link_is_relative_and_resolves_to_a_file(built_site):
    pages = list(built_site.rglob("*.html"))
    assert len(pages) >= 12
    for page in pages:
        for ref in links(page):
            if ref.startswith("data:"):
                continue
            u = urlparse(ref)
            assert not u.scheme and not u.netloc and not ref.startswith("/"), f"{page}: {ref}"
            target = (page.parent / u.path).resolve() if u.path else page
            assert target.is_file(), f"{page.relative_to(built_site)} links to missing {ref}"


def test_pages_fetch_nothing_at_runtime(built_site):
    for page in built_site.rglob("*.html"):
        text = page.read_text()
        assert "fetch(" not in text and "XMLHttpRequest" not in text
        assert not re.search(r"""(src|href)=["']https?://""", text), page
    assert "fetch(" not in (built_site / "static/sort.js").read_text()


def test_offline_model_and_cpu_timers_are_labelled_on_overview_and_method_page(built_site):
    index = (built_site / "index.html").read_text()
    assert "offline model (not an LLM result)" in index
    assert "CPU host timers: test only" in index
    page = (built_site / "methods/best-of-n-offline.html").read_text()
    assert "offline model (not an LLM result)" in page and "CPU host timers: test only" in page
    evo = next((built_site / "methods").glob("evoengineer*.html")).read_text()
    assert "offline model (not an LLM result)" not in evo


def test_overview_shows_cis_validity_and_inline_svg_plots(built_site):
    index = (built_site / "index.html").read_text()
    assert 'class="sortable ranking"' in index and 'class="ci"' in index
    assert "Correct trials" in index and index.count("<svg") == 2


def test_op_page_shows_highlighted_source_speedups_and_baselines(built_site):
    page = (built_site / "ops/relu.html").read_text()
    assert 'class="hl"' in page and "ModelNew" in page
    assert "torch.compile time" in page and "speed-of-light" in page
    assert page.count("µs") >= 3


def test_method_page_shows_budget_usage_config_and_per_op_results(built_site):
    page = next((built_site / "methods").glob("funsearch*.html")).read_text()
    for text in (
        "Budget",
        "evaluations",
        "cost_usd",
        "prompt_tokens",
        "population",
        "deepseek-chat",
        "../ops/relu.html",
    ):
        assert text in page, text


def test_build_without_store_names_the_fix(tmp_path):
    res = CliRunner().invoke(
        main, ["leaderboard", "build", "--results", str(tmp_path), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code != 0 and "no results store" in res.output


def test_serve_previews_the_site_on_loopback(built_site):
    import urllib.request

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "leaderboard",
            "serve",
            "--dir",
            str(built_site),
            "--port",
            "0",
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        with urllib.request.urlopen(f"http://127.0.0.1:{m.group(1)}/index.html", timeout=10) as r:
            assert r.status == 200 and b"Ranking" in r.read()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.slow
def test_wheel_ships_the_templates_and_static_assets(tmp_path):
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "_build", "*.pyc")
    for name in ("harness", "sandbox", "reference_ops", "site"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(src),
            "-w",
            str(tmp_path),
            "--no-deps",
            "--no-build-isolation",
            "-q",
        ],
        check=True,
        cwd=src,
        capture_output=True,
    )
    (whl,) = tmp_path.glob("kernel_harness-*.whl")
    names = set(zipfile.ZipFile(whl).namelist())
    for n in (
        "harness_site/templates/base.html.j2",
        "harness_site/templates/index.html.j2",
        "harness_site/static/sort.js",
        "harness_site/static/style.css",
        "harness/leaderboard/render.py",
    ):
        assert n in names, n
