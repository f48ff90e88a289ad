"""The one environment fingerprint: what this machine is (Python, platform, CPU, torch and
CUDA, the GPUs, the NVIDIA driver, package versions, a container image digest).

Every record of where something ran is a view of ``fingerprint()``, each keeping its stored
shape: the verdict's (``sandbox/worker/judgeenv.py: environment``), the run's and the leaderboard's
(``harness/store/fingerprint.py: environment``) and the doctor's and GPU baselines'
(``harness/env/probe.py: fingerprint``). It lives in the evaluator, which imports nothing of
``harness/``, so that all three can call it; torch is imported only when asked for.

Best-effort, never raises: what cannot be probed is ``None`` (or an empty list).
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    memory_gib: float
    sm_count: int
    capability: str  # compute capability, e.g. "9.0"


@dataclass(frozen=True)
class Machine:
    python: str
    platform: str
    machine: str  # CPU architecture, e.g. "x86_64"
    cpu: str  # processor name, else the architecture
    cpu_count: int | None
    hostname: str
    executable: str
    torch: str | None  # None: torch not importable, or not probed
    cuda: str | None  # the CUDA version torch was built with
    cuda_available: bool
    gpus: tuple[Gpu, ...]
    gpu: str | None  # the first GPU's name: from torch, else from nvidia-smi (when asked)
    driver: str | None  # the NVIDIA driver version (nvidia-smi; when asked)
    image_digest: str | None  # HARNESS_IMAGE_DIGEST, set by the docker backend


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def nvidia_smi(field: str) -> str | None:
    """The first GPU's ``--query-gpu`` field (e.g. ``driver_version``, ``name``), or None."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=15)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else None


@functools.lru_cache(maxsize=1)
def _host() -> tuple[str, str, str, str, int | None, str, str]:
    return (platform.python_version(), platform.platform(), platform.machine(),
            platform.processor() or platform.machine(), os.cpu_count(), platform.node(),
            sys.executable)


def _torch(gpus: bool) -> tuple[str | None, str | None, bool, tuple[Gpu, ...]]:
    try:
        import torch

        version, cuda = str(torch.__version__), torch.version.cuda
    except Exception:  # noqa: BLE001 -- a missing or broken torch is a finding, not an error
        return None, None, False, ()
    if not gpus:
        return version, cuda, False, ()
    try:
        if not torch.cuda.is_available():
            return version, cuda, False, ()
        found = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            found.append(Gpu(i, p.name, round(p.total_memory / 2**30, 1), p.multi_processor_count,
                             f"{p.major}.{p.minor}"))
        return version, cuda, True, tuple(found)
    except Exception:  # noqa: BLE001
        return version, cuda, False, ()


def fingerprint(*, torch: bool = True, gpus: bool = True, smi: bool = True) -> Machine:
    """Where this process runs. ``torch=False`` skips importing torch (slow); ``gpus=False``
    leaves CUDA untouched (no device query: the judge's parent process stays CUDA-free);
    ``smi=False`` runs no ``nvidia-smi`` (driver and the fallback GPU name are then None)."""
    python, plat, arch, cpu, cpu_count, hostname, executable = _host()
    version, cuda, available, found = _torch(gpus) if torch else (None, None, False, ())
    gpu = found[0].name if found else (nvidia_smi("name") if smi else None)
    return Machine(python=python, platform=plat, machine=arch, cpu=cpu, cpu_count=cpu_count,
                   hostname=hostname, executable=executable, torch=version, cuda=cuda,
                   cuda_available=available, gpus=found, gpu=gpu,
                   driver=nvidia_smi("driver_version") if smi else None,
                   image_digest=os.environ.get("HARNESS_IMAGE_DIGEST") or None)
