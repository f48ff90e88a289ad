"""A candidate judged in a container gets the verdict the process backend gives it.

``EvalConfig(sandbox="docker")`` goes through ``sandbox.isolation.get_launcher`` to the docker
backend, here on the host-env image (empty rootfs + the host's Python read-only), against
podman's Docker API. The task and the C++ candidate are the evaluator's own test fixtures, so
the build cache already holds the compiled kernel.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.verdict import Status
from tests.support.judging import judge

pytestmark = pytest.mark.podman

HERE = Path(__file__).parent
REPO = HERE.parents[1]
TASK = REPO / "tests/evaluator/tasks/add.py"
CPP = REPO / "tests/evaluator/candidates/cpp_add.py"


@pytest.fixture
def docker_sandbox(docker_client, monkeypatch):
    """Point ``--sandbox docker`` at the host-env image for this test."""
    from sandbox.isolation import hostenv

    for k, v in hostenv.hostenv_env(docker_client).items():
        monkeypatch.setenv(k, v)
    return "docker"


def _judge(source: str, sandbox: str):
    return judge(TASK, source, seed=7, max_timing_s=1.0, feedback_timing_s=1.0, sandbox=sandbox)


# A torch-computing candidate (custom_code.torch_compute) matched too when checked by hand; one
# candidate keeps this file's run time down (each judgement takes tens of seconds on 2 cores).
@pytest.mark.parametrize("candidate", ["wrong_sign.py"])
def test_container_verdict_matches_process_backend(docker_sandbox, candidate):
    source = (HERE / "candidates" / candidate).read_text()
    in_process = _judge(source, "process")
    in_docker = _judge(source, docker_sandbox)
    assert in_docker.environment.get("isolation") == "docker"
    assert "sha256:" in in_docker.environment["image_digest"]  # the image is recorded
    assert (in_docker.status, in_docker.rule) == (in_process.status, in_process.rule), (
        in_docker.message, in_process.message)
    assert in_docker.status is Status.INCORRECT
    assert [t.passed for t in in_docker.trials] == [t.passed for t in in_process.trials]


@pytest.mark.slow
def test_cpp_kernel_is_valid_in_a_container(docker_sandbox):
    v = _judge(CPP.read_text(), docker_sandbox)
    assert v.environment.get("isolation") == "docker"
    assert v.trials and all(t.passed for t in v.trials), v.message
    assert v.status is Status.VALID, f"{v.status.value} {v.rule}: {v.message}"
    assert "sha256:" in v.environment["image_digest"]
    assert v.environment["image"] == "localhost/kernel-harness-hostenv:1"
