"""The environment fingerprint and code version recorded with every run and leaderboard.

Cheap, never raises: a field that cannot be probed is left out. GPU facts come from torch
(when importable) and ``nvidia-smi`` (driver). A container image digest is taken from the
``HARNESS_IMAGE_DIGEST`` environment variable, which the docker backend sets.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

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
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            continue
    return out


def _nvidia_smi(field: str) -> str | None:
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=15,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else None


def environment(device: str = "cpu", *, probe_torch: bool = True) -> dict[str, Any]:
    """GPU, driver, CUDA, torch, Triton, platform, image digest (what fits this machine).

    ``probe_torch=False`` skips importing torch (slow): the GPU name then comes from
    nvidia-smi and the torch version from package metadata."""
    env: dict[str, Any] = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "hostname": platform.node(),
        "cpu_count": os.cpu_count(),
        "device": device,
        "packages": package_versions(),
    }
    try:
        if not probe_torch:
            raise ImportError("torch probing skipped")
        import torch

        env["torch"] = torch.__version__
        env["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            env["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            env["gpu"] = env["gpus"][0]
            cap = torch.cuda.get_device_capability(0)
            env["compute_capability"] = f"{cap[0]}.{cap[1]}"
    except Exception:  # noqa: BLE001 -- a broken or skipped torch must not stop recording
        pass
    env["triton"] = env["packages"].get("triton")
    env.setdefault("torch", env["packages"].get("torch"))
    if "gpu" not in env and (name := _nvidia_smi("name")):
        env["gpu"] = name
    driver = _nvidia_smi("driver_version")
    if driver:
        env["driver"] = driver
    digest = os.environ.get("HARNESS_IMAGE_DIGEST")
    if digest:
        env["image_digest"] = digest
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
