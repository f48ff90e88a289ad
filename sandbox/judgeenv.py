"""What a verdict records about where it was judged, where builds go, and how a failure's log
is shown: shared by the judge (sandbox/judge.py) and the build worker's driver
(sandbox/prebuild.py), which must not import each other."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from sandbox.machine import fingerprint

if TYPE_CHECKING:
    from sandbox.config import EvalConfig


def cache_root(config: EvalConfig) -> str:
    if config.build_dir:
        return os.path.abspath(config.build_dir)
    from sandbox.buildcache import default_root

    return str(default_root())


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
