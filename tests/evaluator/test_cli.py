"""`harness eval` exit codes: 2 for unusable input (never a verdict), 1 for other verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evaluator.conftest import ADD_TASK, python_candidate

REPO = Path(__file__).resolve().parents[2]


def harness_eval(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "eval", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("def broken(:\n", "does not parse"),
        ("import torch\nx = 1\n", "no class ModelNew"),
        (python_candidate("        return a").replace("def forward(self, a, b)", "def forward(self, a)"),
         "forward takes 1"),
    ],
    ids=["syntax-error", "no-modelnew", "arity-mismatch"],
)
def test_unusable_candidate_exits_2_naming_the_file(tmp_path, source, needle):
    cand = tmp_path / "my_kernel.py"
    cand.write_text(source)
    r = harness_eval(str(ADD_TASK), str(cand), "--device", "cpu")
    assert r.returncode == 2, r.stderr
    assert "my_kernel.py" in r.stderr and needle in r.stderr
    assert r.stdout == ""  # no verdict printed


def test_missing_files_and_bad_task_exit_2(tmp_path):
    cand = tmp_path / "c.py"
    cand.write_text(python_candidate("        return a + b"))
    r = harness_eval(str(tmp_path / "nope.py"), str(cand), "--device", "cpu")
    assert r.returncode == 2 and "no such task file" in r.stderr
    r = harness_eval(str(ADD_TASK), str(tmp_path / "missing.py"), "--device", "cpu")
    assert r.returncode == 2 and "no such candidate file" in r.stderr
    bad_task = tmp_path / "task.py"
    bad_task.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    r = harness_eval(str(bad_task), str(cand), "--device", "cpu")
    assert r.returncode == 2 and "get_inputs" in r.stderr


def test_non_valid_verdict_exits_1_with_json(tmp_path):
    cand = tmp_path / "c.py"
    cand.write_text(python_candidate("        return a + b", "import socket"))  # static scan: fast
    r = harness_eval(str(ADD_TASK), str(cand), "--device", "cpu", "--json")
    assert r.returncode == 1, r.stderr
    v = json.loads(r.stdout)
    assert v["status"] == "rejected" and v["rule"] == "sandbox.network"


KB_RELU = REPO / "tests" / "fixtures" / "kernelbench" / "level1" / "2_ReLU_activation.py"


@pytest.mark.skipif(not KB_RELU.exists(), reason="KernelBench fixture not present")
def test_kernelbench_task_unchanged_valid_exits_0(tmp_path):
    cand = tmp_path / "relu_new.py"
    cand.write_text(
        "import torch\nimport torch.nn as nn\n\n\n"
        "class ModelNew(nn.Module):\n"
        "    def __init__(self, *args):\n        super().__init__()\n\n"
        "    def forward(self, x):\n        return torch.relu(x)\n"
    )
    r = harness_eval(str(KB_RELU), str(cand), "--device", "cpu", "--mode", "feedback", "--allow-torch-ops",
                     "--max-timing-s", "0.3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "status:   valid" in r.stdout and "speedup vs eager" in r.stdout


def test_docker_sandbox_without_its_image_or_engine_is_a_setup_error(tmp_path):
    """--sandbox docker where the image (or the engine) is missing: exit 2 with what to do, no
    traceback (with an engine: 'not present ... nox -s image'; without one: how to start one)."""
    cand = tmp_path / "k.py"
    cand.write_text(python_candidate("        return a + b"))
    r = subprocess.run([sys.executable, "-m", "harness", "eval", str(ADD_TASK), str(cand), "--device", "cpu",
                        "--sandbox", "docker"], cwd=REPO, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "HARNESS_DOCKER_IMAGE": "localhost/kh-missing-image:0"})
    assert r.returncode == 2, r.stderr
    assert "error:" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""
