"""Processes seen from /proc, for tests that check nothing of theirs outlived what they stopped."""

from __future__ import annotations

import os
from pathlib import Path


def running_in(folder: str | os.PathLike[str]) -> list[str]:
    """Command lines of the running processes that name ``folder`` (a compiler writing there)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(folder) in cmd:
            out.append(cmd)
    return out
