"""A machine without user namespaces: ``harness doctor`` says so with the fix, and judging
refuses to start (exit 2) instead of running a candidate unconfined.

Made real here: inside a user namespace of our own, ``user.max_user_namespaces`` is set to 0,
so every later unshare(CLONE_NEWUSER) fails (ENOSPC) as it does on a host with them disabled.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RELU = REPO / "tests" / "adversarial"


def _can_nest() -> bool:
    if not shutil.which("unshare") or not Path("/proc/sys/user/max_user_namespaces").exists():
        return False
    r = subprocess.run(["unshare", "-U", "-r", "sh", "-c", "echo 0 > /proc/sys/user/max_user_namespaces"],
                       capture_output=True, timeout=30)
    return r.returncode == 0


pytestmark = pytest.mark.skipif(not _can_nest(), reason="cannot make a user namespace with the limit at 0 here")


def _inside(cmd: list[str]) -> subprocess.CompletedProcess:
    script = "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\""
    return subprocess.run(["unshare", "-U", "-r", "sh", "-c", script, "sh", *cmd], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})


def test_doctor_names_the_missing_layer_and_the_fix():
    r = _inside([sys.executable, "-m", "harness", "doctor"])
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("process isolation:")), "")
    assert "none" in line and "--unsafe-no-isolation" in line, r.stdout[-3000:]
    assert "max_user_namespaces" in r.stdout, r.stdout[-3000:]


def test_eval_refuses_to_judge_unconfined_with_exit_2():
    r = _inside([sys.executable, "-m", "harness", "eval", str(RELU / "tasks" / "relu.py"),
                 str(RELU / "candidates" / "honest_cpu_relu.py")])
    assert r.returncode == 2, (r.returncode, r.stderr[-3000:])
    assert "--unsafe-no-isolation" in r.stderr and "max_user_namespaces" in r.stderr, r.stderr[-3000:]
