"""Fixtures for the container tests: a Docker-API engine (podman here) and the host-env image.

The engine is found through DOCKER_HOST or the usual sockets; when none answers and podman
is installed, scripts/podman_service.sh starts one. Tests skip, saying why, only when no
engine can be started at all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


_STARTED: list[int] = []  # pid of the podman service this session started, stopped at the end


def _start_podman() -> str | None:
    if not shutil.which("podman"):
        return "podman is not installed (Debian: apt-get install podman runc)"
    state = Path(os.environ.get("KH_PODMAN_DIR") or "/tmp/kh-podman-tests")
    env = {**os.environ, "KH_PODMAN_DIR": str(state)}
    (state / "service.pid").unlink(missing_ok=True)  # a pid file after the script = ours
    r = subprocess.run(["bash", str(REPO / "scripts/podman_service.sh")], capture_output=True,
                       text=True, timeout=60, env=env)
    if r.returncode != 0:
        return f"scripts/podman_service.sh failed: {r.stderr.strip()[-400:]}"
    for line in r.stdout.splitlines():
        if line.startswith("export DOCKER_HOST="):
            os.environ["DOCKER_HOST"] = line.split("=", 1)[1]
    pid_file = state / "service.pid"
    if pid_file.is_file():
        _STARTED.append(int(pid_file.read_text().strip()))
    return None


def _stop_started() -> None:
    import signal

    for pid in _STARTED:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    _STARTED.clear()


@pytest.fixture(scope="session")
def docker_client():
    from sandbox.isolation import engine

    try:
        client = engine.connect()
    except engine.EngineUnavailable as first:
        why = _start_podman()
        if why:
            pytest.skip(f"no container engine: {first}; {why}")
        try:
            client = engine.connect()
        except engine.EngineUnavailable as e:
            pytest.skip(f"no container engine could be started: {e}")
    os.environ["DOCKER_HOST"] = getattr(client, "kh_url", os.environ.get("DOCKER_HOST", ""))
    yield client
    client.close()
    _stop_started()  # only a service this session started itself


@pytest.fixture(scope="session")
def hostenv_image(docker_client):
    from sandbox.isolation import hostenv

    return hostenv.hostenv_spec(docker_client)


@pytest.fixture
def launcher(docker_client, hostenv_image):
    from sandbox.isolation.docker_backend import ContainerOptions, DockerLauncher

    return DockerLauncher(image=hostenv_image, client=docker_client,
                          options=ContainerOptions(cpus=1.0, backstop_grace_s=5))
