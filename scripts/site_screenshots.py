"""Screenshots of a built leaderboard site in headless Chromium (docs/img/, the README's picture).

    python scripts/site_screenshots.py site/_build docs/img [--entry ENTRY_ID] [--op relu]

Writes overview.png (the ranking tables), method.png (an entry's page: per-op speedups with
their intervals and directions, the reproduce links) and op.png (one op across entries). The
entry defaults to the first ranked one, the op to the entry's first. Needs playwright and
/usr/bin/chromium (`bash scripts/setup.sh --system`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--entry", default=None)
    ap.add_argument("--op", default=None)
    a = ap.parse_args()
    lb = json.loads((a.site / "leaderboard.json").read_text())
    ranked = [r["entry"] for t in lb["tables"] for r in t["rows"]]
    entry = a.entry or (ranked[0] if ranked else lb["entries"][0]["entry_id"])
    e = next(x for x in lb["entries"] if x["entry_id"] == entry)
    op = a.op or e["ops"][0]["op"]
    pages = {"overview.png": "index.html", "method.png": f"methods/{entry}.html", "op.png": f"ops/{op}.html"}
    a.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for name, rel in pages.items():
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto((a.site / rel).resolve().as_uri())
            page.wait_for_load_state("load")
            page.screenshot(path=str(a.out / name), full_page=True)
            page.close()
            print(f"{a.out / name}: {rel}")
        browser.close()


if __name__ == "__main__":
    main()
