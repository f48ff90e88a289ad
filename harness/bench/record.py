"""One JSON record per scenario run: when, on what machine, at which commit, what command, the exit
code, the seconds, and the scenario's summary (or the tail of its output)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "docs" / "records" / "bench"


def _run(argv: list[str]) -> str:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        return r.stdout.strip() if r.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def machine() -> dict[str, Any]:
    """The GPUs (nvidia-smi), the driver, torch and CUDA, the cores and memory."""
    gpus = [g.strip() for g in _run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                       "--format=csv,noheader"]).splitlines() if g.strip()]
    code = "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"
    py, torch_v, cuda = (_run([sys.executable, "-c", code]).split() + ["?", "?", "?"])[:3]
    mem = ""
    try:
        mem = next(x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal"))
    except (OSError, StopIteration):
        pass
    return {"gpus": gpus or ["none"], "python": py, "torch": torch_v, "cuda": cuda, "cpus": os.cpu_count(),
            "memory": mem.split(":", 1)[-1].strip()}


def commit() -> str:
    """KH_COMMIT when set (a device's copy of the repository may carry a stale .git), else git's HEAD."""
    if os.environ.get("KH_COMMIT"):
        return os.environ["KH_COMMIT"]
    head = _run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = _run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"])
    return (head or "unknown") + ("-dirty" if dirty else "")


def write(scenario: str, command: list[str], rc: int, seconds: float, summary: str, out: Path,
          folder: Path | None = None) -> list[Path]:
    """The record, to ``folder`` (default docs/records/bench/) and to ``$OUT`` when set; returns the
    paths written."""
    folder = folder or RECORDS
    now = time.gmtime()
    info = machine()
    gpu = slug(info["gpus"][0].split(",")[0], "none")
    rec = {"scenario": scenario, "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", now), "machine": info,
           "commit": commit(), "command": " ".join(command), "exit": rc, "seconds": round(seconds, 1),
           "output": str(out), "summary": summary[-6000:]}
    return save(rec, f"{time.strftime('%Y-%m-%d-%H%M', now)}-{gpu}-{scenario}.json", folder)


def slug(name: str, empty: str = "unknown") -> str:
    """A GPU's name as it goes into a record's file name ("NVIDIA H200" -> "nvidia-h200")."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:24] or empty


def save(rec: dict[str, Any], name: str, folder: Path) -> list[Path]:
    """``rec`` as ``folder/name`` and, when $OUT is set, ``$OUT/name`` too (a device call brings
    $OUT back); returns the paths written."""
    paths = [folder / name]
    if os.environ.get("OUT"):
        paths.append(Path(os.environ["OUT"]) / name)
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    return paths
