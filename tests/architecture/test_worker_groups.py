"""Files with a module-scoped fixture run whole on one pytest-xdist worker (tests/support/groups.py),
checked in a child ``pytest -n 2 --dist loadgroup``: the fixture is built once and every test of
its file reports the same worker. With tests handed out one at a time (pytest 9.2 dropped the node
id suffix xdist's own hook writes, 2026-11-27) the file's tests land on both workers and the
fixture is built twice."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist", reason="pytest-xdist is not installed")

REPO = Path(__file__).resolve().parents[2]
SHARED = '''
import os
import pytest

@pytest.fixture(scope="module")
def costly(tmp_path_factory):
    with open(os.environ["KH_GROUPS_LOG"], "a") as f:
        f.write("built " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")
    return 1

@pytest.mark.parametrize("i", range(6))
def test_uses_it(costly, i):
    with open(os.environ["KH_GROUPS_LOG"], "a") as f:
        f.write("shared " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")
'''
FREE = '''
import time
import pytest

@pytest.mark.parametrize("i", range(6))
def test_alone(i):
    time.sleep(0.1)
'''


def test_a_file_with_a_module_fixture_runs_whole_on_one_worker_and_builds_it_once(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "test_shared.py").write_text(SHARED)
    (folder / "test_free.py").write_text(FREE)
    log = tmp_path / "log.txt"
    env = {**os.environ, "PYTHONPATH": str(REPO), "KH_GROUPS_LOG": str(log)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q",
                        "-n", "2", "--dist", "loadgroup", str(folder)], cwd=folder, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = collections.Counter(log.read_text().split("\n")[:-1])
    built = [w for w in lines if w.startswith("built")]
    shared = [w for w in lines if w.startswith("shared")]
    assert len(built) == 1 and lines[built[0]] == 1, lines  # the fixture once, on one worker
    assert len(shared) == 1 and lines[shared[0]] == 6 and shared[0].split()[1] == built[0].split()[1], lines
