"""One trusted helper library compiled into the cache once, atomically (sandbox/rules/opcount.py's
op counter, sandbox/check/fusedcompare.py's compare kernel): the parent compiles it to a private
temporary name in the entry's folder and renames it into place, so a reader finds a finished file
or none, and builds at once in several processes never share a file."""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path


def compile_once(folder: Path, name: str, source: str, suffix: str,
                 argv: Callable[[Path, Path], list[str]]) -> tuple[str | None, str]:
    """(path of ``folder/<name>.so``, "") once it exists, built from ``source`` (written to a file
    ending in ``suffix``) by the command ``argv(source file, output file)`` where it did not; or
    (None, the compiler's last line) where that command failed."""
    so = folder / f"{name}.so"
    if so.exists():
        return str(so), ""
    folder.mkdir(parents=True, exist_ok=True)
    me = f"{os.getpid()}.{threading.get_native_id()}"
    src, tmp = folder / f"{name}.{me}{suffix}", folder / f".{name}.{me}.so"
    src.write_text(source)
    cmd = argv(src, tmp)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    finally:
        src.unlink(missing_ok=True)
    if r.returncode == 0:
        os.replace(tmp, so)
        return str(so), ""
    tmp.unlink(missing_ok=True)
    return None, (r.stderr.strip().splitlines() or [f"{cmd[0]} exit {r.returncode}"])[-1][:300]


def file_sha256(path: str) -> str:
    """The hash the parent records for a built library; a worker loads only the file that has it."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()
