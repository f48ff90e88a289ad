"""Package list for setuptools (everything else is in pyproject.toml).

``harness_site`` is the leaderboard's templates and static assets, kept in the repository's
``site/`` folder; ``site`` is a stdlib module name, so it is installed under another name. The
folders that hold only data (prompt templates, seed kernels, the site's templates and assets) are
namespace packages, so that setuptools ships their files as package data by name.
"""

from setuptools import find_namespace_packages, find_packages, setup

setup(
    packages=find_packages(include=["harness*", "sandbox*", "reference_ops*"])
    + find_namespace_packages(include=["harness.methods.prompts.*", "reference_ops.seeds.*"])
    + ["harness_site", "harness_site.templates", "harness_site.static"],
    package_dir={"harness_site": "site"},
)
