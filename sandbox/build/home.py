"""Where the harness keeps its machine-wide caches: ``$HARNESS_CACHE``, else
``~/.cache/kernel-harness``. The build cache (``build/``) and the precompiled headers (``pch/``)
sit under it."""

from __future__ import annotations

import os
from pathlib import Path


def cache_base() -> Path:
    env = os.environ.get("HARNESS_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kernel-harness"
