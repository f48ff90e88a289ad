"""The leaderboard: collect runs from results stores (collect.py), group them into entries by
their settings (settings.py, build.py) and into ranking tables of comparable entries
(tables.py), aggregate them with harness.stats into one typed ``Leaderboard`` (model.py), render
static HTML (render.py, plots.py), and re-judge published rows (verify.py)."""
