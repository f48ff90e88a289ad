"""The leaderboard: collect runs from results stores (collect.py), aggregate them with
harness.stats into one typed ``Leaderboard`` (model.py, build.py), render static HTML
(render.py, plots.py), and re-measure recorded best kernels (verify.py)."""
