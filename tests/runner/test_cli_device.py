"""``--device`` is checked against the machine before anything starts, in every command that takes
it (issue 26, item 2): one line naming the value and the fix, exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TASK = str(REPO / "tests/adversarial/tasks/relu.py")
CAND = str(REPO / "tests/adversarial/candidates/honest_cuda_relu.py")


def _has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


COMMANDS = {
    "eval": ["eval", TASK, CAND, "--mode", "feedback"],
    "eval-batch": ["eval-batch", "{tmp}/gens", "--out", "{tmp}/out"],
    "run": ["run", "--method", "best-of-n", "--llm", "offline", "--ops", "relu", "--budget", "1",
            "--results", "{tmp}/results"],
    "leaderboard-verify": ["leaderboard", "verify", "--results", "{tmp}/results"],
}
DEVICES = {"unknown": ("tpu", "not a device this harness judges on"),
           "no-gpu": ("cuda", "no CUDA GPU is visible")}


@pytest.mark.parametrize("device", sorted(DEVICES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_device_this_machine_lacks_is_refused_before_anything_starts(tmp_path, command, device):
    value, needle = DEVICES[device]
    if device != "unknown" and _has_gpu():
        pytest.skip("this machine has a GPU: the no-GPU refusal cannot be shown here")
    (tmp_path / "gens").mkdir()
    args = [a.format(tmp=tmp_path) for a in COMMANDS[command]] + ["--device", value]
    p = subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=120,
                       cwd=REPO)
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr + p.stdout
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and f"--device {value}" in lines[0] and needle in lines[0], lines
    assert not (tmp_path / "results").exists()  # nothing started, nothing written


def test_device_values_resolve_against_this_machine():
    from harness.env.devices import resolve_device
    from harness.usererror import UserError

    assert resolve_device("cpu") == "cpu" and resolve_device(" CPU ") == "cpu"
    assert resolve_device(None) == ("cuda" if _has_gpu() else "cpu")
    with pytest.raises(UserError, match="--device cuda:7"):
        resolve_device("cuda:7")  # no GPU here, or fewer than eight
    with pytest.raises(UserError, match="--device cuda0"):
        resolve_device("cuda0")
