"""Leaderboard templates and static assets, installed as the package ``harness_site``.

The repository keeps them in ``site/`` (``site`` itself is a stdlib module name, so the
package gets another name through setuptools' package-dir mapping). Loaded with jinja2's
``PackageLoader("harness_site", "templates")``.
"""
