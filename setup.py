"""Package list for setuptools (everything else is in pyproject.toml).

``harness_site`` is the leaderboard's templates and static assets, kept in the repository's
``site/`` folder; ``site`` is a stdlib module name, so it is installed under another name.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["harness*", "sandbox*", "reference_ops*"]) + ["harness_site"],
    package_dir={"harness_site": "site"},
)
