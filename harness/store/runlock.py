"""Which process is running a run now, so that a run is never run by two processes at once.

`harness run --run-id ID` resumes a run; `harness runs show` prints that command for a run not
finished. Given to a run that another process is still running, it would judge the same ops
twice, side by side, into one run. A process running a run holds an ``flock`` on
``<results>/locks/<run id>.lock`` (its pid, host and start time written in it) from before the
run is opened until it ends; the kernel drops it when the process dies, however it dies.

* ``hold(results_dir, run_id)``: take it, or raise ``RunBusy`` naming the holder and what to do.
* ``holder(results_dir, run_id)``: who holds it now (``Holder``), or None: a run whose status is
  ``running`` with no holder ended without finishing (a crash, a kill -9, a lost machine).

An ``flock`` is exact on one machine's local disk. A results folder on a network file system
shared by several machines may not carry it: there, the file's host names the machine to ask.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.store.db import StoreError


class RunBusy(StoreError):
    """The run is being run now by another process."""


@dataclass
class Holder:
    pid: int | None
    host: str | None
    since: str | None

    def describe(self) -> str:
        where = f"pid {self.pid}" if self.pid else "another process"
        if self.host and self.host != socket.gethostname():
            where += f" on host {self.host}"
        return where + (f", since {self.since}" if self.since else "")


def lock_file(results_dir: str | Path, run_id: str) -> Path:
    return Path(results_dir) / "locks" / (re.sub(r"[^A-Za-z0-9._-]", "_", run_id) + ".lock")


def _read(path: Path) -> Holder:
    try:
        doc = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        doc = {}
    return Holder(doc.get("pid"), doc.get("host"), doc.get("since"))


def holder(results_dir: str | Path, run_id: str) -> Holder | None:
    """The process holding ``run_id`` now, or None (no lock file, or nobody holds it)."""
    path = lock_file(results_dir, run_id)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # shared: never keeps a starting run out for long
        except OSError:
            return _read(path)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def hold(results_dir: str | Path, run_id: str) -> Iterator[None]:
    """Hold ``run_id`` for the block; ``RunBusy`` when another process does. Where the lock file
    cannot be made (a read-only folder), nothing is held and the block runs."""
    path = lock_file(results_dir, run_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + 1.0  # a reader's shared probe (holder) lasts microseconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    who = _read(path)
                    raise RunBusy(
                        f"run {run_id!r} is being run now by {who.describe()}; resuming it here as well would "
                        f"judge its ops twice. Wait for it to end, or stop it (Ctrl-C in its terminal, or "
                        f"kill -TERM {who.pid or 'PID'}: it is stored interrupted), then run this command "
                        "again") from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode())
        yield
    finally:
        os.close(fd)  # drops the flock
