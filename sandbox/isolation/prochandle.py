"""A started worker's handle in the process backend (sandbox/isolation/process.py starts it): wait,
kill the whole tree, freeze and thaw it while the parent checks an output, and a watchdog thread.

The watchdog, every 0.25 s: the worker's processes against ``Limits.max_processes``; a writable
build tier against its quota (sandbox/build/tiers.py); and its memory, resident pages (less the
judgement's shared arena it maps) plus what it holds in the jail's tmpfs and, every fourth tick,
in its scratch dir, against ``Limits.rss_bytes``. Over any: the tree is killed and ``violation()``
says why.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading

from sandbox.isolation.base import Limits
from sandbox.isolation.proctree import (
    _dir_bytes,
    _rss_bytes,
    continue_tree,
    descendants,
    shared_children_map,
    stop_tree,
    tree,
)

WATCH_SCAN_MAX_AGE_S = 0.2  # watchdogs share one host scan this fresh (proctree.shared_children_map)


class ProcessHandle:
    def __init__(self, proc: subprocess.Popen, isolation: str, limits: Limits, scratch: str,
                 root: str | None = None, quotas: tuple[tuple[str, int], ...] = ()) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.isolation = isolation
        self.limits = limits
        self.scratch = scratch
        self.root = root
        self._violation: str | None = None
        self.shared_allowance = 0  # bytes of the judgement's arena this worker maps (not its memory)
        self.quotas = tuple(quotas)  # (dir, max bytes): a writable build tier (sandbox/build/tiers.py)
        self._stop = threading.Event()
        self._watch = threading.Thread(target=self._watchdog, daemon=True, name="kh-watchdog")
        self._watch.start()

    def _jail_tmp_bytes(self, kids: dict[int, list[int]]) -> int:
        """What the jail's tmpfs (/tmp, /var/tmp, /dev/shm) holds: seen through PID 1's root.
        Nothing before PID 1 has pivoted into the jail's root: until then its /tmp is the host's,
        whose disk usage (tens of GB) is no worker's memory (the watchdog killed starting workers
        for it, more often on a loaded machine, where that window is longer)."""
        if self.root is None:
            return 0
        try:
            c1 = kids[self.pid][0]
            tmp = f"/proc/{kids[c1][0]}/root/tmp"
            if os.stat(tmp).st_dev == os.stat("/tmp").st_dev:  # not yet its own tmpfs
                return 0
            st = os.statvfs(tmp)
            return (st.f_blocks - st.f_bfree) * st.f_frsize
        except (KeyError, IndexError, OSError):
            return 0

    def _watchdog(self) -> None:
        tick = 0
        while not self._stop.wait(0.25):
            if self.proc.poll() is not None:
                return
            kids = shared_children_map(WATCH_SCAN_MAX_AGE_S)  # one scan for all watchdogs of this process
            pids = descendants(self.pid, kids)
            if len(pids) > self.limits.max_processes:
                self._violation = f"processes: {len(pids)} > limit {self.limits.max_processes}"
                self.kill()
                return
            tick += 1
            over = self._over_quota()
            if over:
                self._violation = over
                self.kill()
                return
            if self.limits.rss_bytes:
                held = _rss_bytes(pids, self.shared_allowance) + self._jail_tmp_bytes(kids)
                if tick % 4 == 0:
                    held += _dir_bytes(self.scratch)
                if held > self.limits.rss_bytes:
                    self._violation = (f"memory above {self.limits.rss_bytes} bytes (resident, plus files in "
                                       "/tmp, /dev/shm and the scratch dir)")
                    self.kill()
                    return

    def _over_quota(self) -> str | None:
        from sandbox.build.tiers import over_quota

        for path, limit in self.quotas:
            over = over_quota(path, limit)
            if over:
                return over
        return None

    def set_shared_allowance(self, nbytes: int) -> None:
        self.shared_allowance = int(nbytes)

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        for _ in range(3):
            pids = tree(self.pid) if self.proc.poll() is None else []
            for p in reversed(pids):
                try:
                    os.kill(p, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if self.wait(1.0) is not None:
                break
        self._stop.set()
        if self.root:
            shutil.rmtree(self.root, ignore_errors=True)

    def violation(self) -> str | None:
        return self._violation

    def freeze(self) -> list[int]:
        """Stop every process of the worker's tree (the judge's output check runs meanwhile)."""
        return stop_tree(self.pid) if self.proc.poll() is None else []

    def thaw(self, token: list[int]) -> None:
        continue_tree(token)

    def extra_processes(self) -> int:
        """Processes in the worker's tree beyond its own (the jail's launcher, its namespace's
        init and the worker itself): what the candidate left running."""
        if self.proc.poll() is not None:
            return 0
        own = 4 if self.root is not None else 1
        return max(0, len(tree(self.pid)) - own)
