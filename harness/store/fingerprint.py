"""The environment fingerprint and code version recorded with every run and leaderboard.

Cheap, never raises: a field that cannot be probed is left out. The facts come from the one
environment fingerprint, ``sandbox/machine.py`` (torch when importable, ``nvidia-smi`` for the
driver, ``HARNESS_IMAGE_DIGEST`` for a container image digest, which the docker backend sets).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from sandbox.contract import fingerprint, package_version

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("torch", "triton", "numpy", "scipy", "jinja2", "openai", "kernel-harness")


def _git(*args: str, cwd: Path = REPO_ROOT) -> str | None:
    if not (cwd / ".git").exists() or shutil.which("git") is None:
        return None
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def git_commit() -> str | None:
    """The harness checkout's HEAD commit, with ``-dirty`` when the tree has changes."""
    head = _git("rev-parse", "HEAD")
    if head is None:
        return None
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return f"{head}-dirty" if dirty else head


def git_describe() -> str | None:
    return _git("describe", "--always", "--dirty", "--tags")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    return {n: v for n in names if (v := package_version(n)) is not None}


def environment(device: str = "cpu", *, probe_torch: bool = True) -> dict[str, Any]:
    """GPU, driver, CUDA, torch, Triton, platform, image digest (what fits this machine): the
    run's and the leaderboard's view of the one fingerprint (``sandbox/machine.py``).

    ``probe_torch=False`` skips importing torch (slow): the GPU name then comes from
    nvidia-smi and the torch version from package metadata."""
    m = fingerprint(torch=probe_torch)
    env: dict[str, Any] = {
        "platform": m.platform,
        "machine": m.machine,
        "python": m.python,
        "hostname": m.hostname,
        "cpu_count": m.cpu_count,
        "device": device,
        "packages": package_versions(),
    }
    if m.torch is not None:
        env["torch"] = m.torch
        env["cuda"] = m.cuda
    if m.gpus:
        env["gpus"] = [g.name for g in m.gpus]
        env["gpu"] = m.gpu
        env["compute_capability"] = m.gpus[0].capability
    env["triton"] = env["packages"].get("triton")
    env.setdefault("torch", env["packages"].get("torch"))
    env.setdefault("gpu", m.gpu)  # no GPU from torch: nvidia-smi's name
    env.update(driver=m.driver, image_digest=m.image_digest)
    return {k: v for k, v in env.items() if v is not None}


def hardware_label(env: dict[str, Any]) -> str:
    """A short label to compare machines: the GPU name, else the CPU architecture."""
    if env.get("gpu"):
        return str(env["gpu"])
    gpus = env.get("gpus")
    if isinstance(gpus, list) and gpus:
        return str(gpus[0])
    arch = env.get("machine") or env.get("arch")
    return f"CPU ({arch})" if arch else "CPU"
