"""Developer sessions. Each is a thin wrapper over one helper; ``session.posargs`` pass through.

    nox -s tests        the README's test suite (CPU; GPU tests skip themselves)
    nox -s lint         ruff
    nox -s demo         the README's main job on embedded defaults (offline LLM, CPU, SQLite)
    nox -s bench        pytest-benchmark throughput and overhead benchmarks
    nox -s site         build the leaderboard from ./results into site/_build
    nox -s gpu          the whole GPU check (run it on a machine with a CUDA GPU)
    nox -s image        build the Docker image
"""

from __future__ import annotations

import os
import platform

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True
PY = "3.11"


def _install(session: nox.Session, *extras: str) -> None:
    """Install torch's CPU build first where there is no GPU (no multi-GB CUDA download)."""
    session.run("python", "--version")
    torch_spec = os.environ.get("HARNESS_TORCH_SPEC", "torch==2.13.0")
    session.install(torch_spec)
    spec = f".[{','.join(extras)}]" if extras else "."
    session.install("-e", spec)
    session.run("python", "-c", "import torch, sys; print('torch', torch.__version__, sys.platform, "
                f"'{platform.machine()}')")


@nox.session(python=PY)
def tests(session: nox.Session) -> None:
    _install(session, "dev")
    session.run("pytest", *(session.posargs or ("-n", "2", "--dist", "loadgroup")))


@nox.session(python=PY)
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "--version")
    session.run("ruff", "check", "harness", "sandbox", "reference_ops", "tests", "noxfile.py", *session.posargs)


@nox.session(python=PY)
def demo(session: nox.Session) -> None:
    _install(session, "dev")
    session.run("bash", "scripts/demo.sh", *session.posargs)


@nox.session(python=PY)
def bench(session: nox.Session) -> None:
    _install(session, "dev")
    session.run("pytest", "tests/benchmarks", "--benchmark-only",
                "--benchmark-json=.benchmarks/latest.json", *session.posargs)


@nox.session(python=PY)
def site(session: nox.Session) -> None:
    _install(session, "dev")
    session.run("harness", "leaderboard", "build", "--results", "results", "--out", "site/_build",
                *session.posargs)


@nox.session(python=False)
def gpu(session: nox.Session) -> None:
    """Uses the machine's own python (the lent GPU's image already has torch + CUDA)."""
    session.run("python3", "harness/bench/tools/gpu_check.py", *session.posargs)


@nox.session(python=False)
def image(session: nox.Session) -> None:
    session.run("docker", "build", "-t", "kernel-harness:latest", "--platform", "linux/amd64", ".",
                *session.posargs)
