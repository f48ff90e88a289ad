"""The CI skip policy (tests/conftest.py, tests/support/skips.py), run in a child pytest: with
KH_CI_SKIP_POLICY=1 a skip whose reason is not documented fails an otherwise green run and is
named; documented reasons (a GPU, a benchmark) and xfails do not; without the variable nothing
changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import skips

REPO = Path(__file__).resolve().parents[2]
TESTS = '''
import pytest

def test_passes():
    pass

def test_needs_a_gpu():
    pytest.skip("needs a CUDA GPU")

@pytest.mark.xfail(reason="a known gap", strict=True)
def test_known_gap():
    assert False
'''
UNDOCUMENTED = '''

@pytest.mark.skip(reason="podman is not installed")
def test_needs_podman():
    pass
'''


def _pytest(folder: Path, policy: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != skips.POLICY_ENV}
    env["PYTHONPATH"] = str(REPO)
    if policy:
        env[skips.POLICY_ENV] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q",
                           str(folder)], cwd=folder, env=env, capture_output=True, text=True, timeout=300)


MODULE_SKIP = '''
import pytest

pytest.importorskip("no_such_module_kh", reason="no_such_module_kh is not installed")


def test_never_collected():
    pass
'''


@pytest.mark.parametrize("undocumented", [False, True])
def test_an_undocumented_skip_fails_the_run_only_under_the_policy(tmp_path, undocumented):
    (tmp_path / "test_x.py").write_text(TESTS + (UNDOCUMENTED if undocumented else ""))
    if undocumented:  # a whole module skipped while collected counts too
        (tmp_path / "test_y.py").write_text(MODULE_SKIP)
    with_policy, without = _pytest(tmp_path, True), _pytest(tmp_path, False)
    assert without.returncode == 0, without.stdout
    assert "skip policy" not in without.stdout
    assert "needs a CUDA GPU" in with_policy.stdout and "skip policy" in with_policy.stdout
    if undocumented:
        assert with_policy.returncode == 1, with_policy.stdout
        assert "BAD  podman is not installed" in with_policy.stdout
        assert "test_x.py::test_needs_podman: podman is not installed" in with_policy.stdout
        assert "test_y.py: no_such_module_kh is not installed" in with_policy.stdout
    else:
        assert with_policy.returncode == 0, with_policy.stdout
        assert "every reason documented" in with_policy.stdout and "a known gap" not in with_policy.stdout


def test_the_documented_reasons_match_what_the_suite_skips_for():
    assert skips.allowed("needs a CUDA GPU") and skips.allowed("Skipped: needs a CUDA GPU")
    assert skips.allowed("benchmark: run with nox -s bench (or KH_BENCH=1 pytest tests/benchmarks)")
    for capability in ("no container engine: ...", "Ray is not installed (pip install 'kernel-harness[ray]')",
                       "playwright not installed", "no process isolation here: jail: ...",
                       "cannot make a user namespace with the limit at 0 here"):
        assert not skips.allowed(capability), capability  # CI provides these: a skip there is a failure
