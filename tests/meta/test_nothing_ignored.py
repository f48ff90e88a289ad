"""No source file of the project is hidden by .gitignore (session 16: a ``build/`` pattern ignored
``sandbox/build/``, so a new module there, sandbox/build/slim.py, was never committed and CI's
clean checkout failed to import it). Runs where the checkout has its files: a developer's tree
catches it before the commit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE = ("harness", "sandbox", "reference_ops", "submissions", "site", "tests", "scripts", "docs")


def test_no_source_file_is_ignored_by_git():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    files = [str(p.relative_to(REPO)) for d in SOURCE for p in (REPO / d).rglob("*")
             if p.is_file() and p.suffix in (".py", ".md", ".j2", ".sh", ".cpp", ".cu", ".json", ".toml")
             and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts]
    r = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=REPO, input="\n".join(files),
                       capture_output=True, text=True)
    ignored = [f for f in r.stdout.splitlines() if f]
    assert not ignored, f"ignored by .gitignore, so never committed: {ignored[:20]}"
