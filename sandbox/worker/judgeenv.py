"""What a verdict records about where it was judged, where builds go, the judging workers'
limits, and how a failure's log is shown: shared by the judge (sandbox/judge.py) and the build
worker's driver (sandbox/build/prebuild.py), which must not import each other."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from sandbox.isolation.base import Limits
from sandbox.machine import fingerprint

if TYPE_CHECKING:
    from sandbox.config import EvalConfig


def cache_root(config: EvalConfig) -> str:
    if config.build_dir:
        return os.path.abspath(config.build_dir)
    from sandbox.build.buildcache import default_root

    return str(default_root())


def mem_total() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 16 * 2**30


def worker_limits(cfg: EvalConfig) -> tuple[Limits, int]:
    """(the judging workers' limits, this machine's memory in bytes)."""
    cpu = not cfg.device.startswith("cuda")
    ram = mem_total()
    if cfg.memory_limit_gb:
        rss = int(cfg.memory_limit_gb * 2**30)
    else:
        rss = min(8 * 2**30, int(0.35 * ram)) if cpu else 64 * 2**30
    # RLIMIT_AS (CPU only; CUDA reserves huge virtual ranges) is a backstop above the RSS
    # watchdog: torch alone maps ~1-2 GiB of address space
    limits = Limits(address_space_bytes=(min(16 * 2**30, max(rss + 4 * 2**30, int(0.5 * ram))) if cpu else None),
                    rss_bytes=rss, wall_seconds=cfg.timeout_s, tmp_bytes=rss,
                    **({"file_size_bytes": cfg.file_size_limit_bytes} if cfg.file_size_limit_bytes else {}))
    return limits, ram


def environment(device: str, isolation: str) -> dict[str, Any]:
    """The verdict's view of the environment fingerprint (``sandbox/machine.py``): no device
    query and no nvidia-smi, so judging's parent process stays CUDA-free and cheap."""
    m = fingerprint(gpus=False, smi=False)
    env: dict[str, Any] = {"python": m.python, "torch": m.torch, "cuda": m.cuda,
                           "platform": m.platform, "isolation": isolation, "device": device}
    if not device.startswith("cuda"):
        env["cpu_threads_per_worker"] = 1
    return env


def _errors_first(log: str, limit: int = 6000) -> str:
    lines = log.splitlines()
    errs = [ln for ln in lines if "error" in ln.lower()][:40]
    head = "\n".join(errs)
    rest = log if len(log) <= limit else log[-limit:]
    out = (head + "\n----- full log (tail) -----\n" + rest) if errs else rest
    return out[: limit * 2]
