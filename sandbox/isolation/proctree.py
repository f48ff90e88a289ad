"""A worker's process tree as the parent sees it through the host's /proc: descendants by
parent links, their resident memory, and the bytes held in files under a directory. The
watchdog (sandbox/isolation/process.py) kills a jail above its limits with these."""

from __future__ import annotations

import os
import signal
import threading
import time


def _state_and_ppid(stat: bytes) -> tuple[bytes, int]:
    """(state letter, parent pid) from a /proc/<pid>[/task/<tid>]/stat line (the comm may hold ')')."""
    rest = stat[stat.rfind(b")") + 2 :].split()
    return rest[0], int(rest[1])


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                s = f.read()
        except OSError:
            continue
        ppid = _state_and_ppid(s)[1]
        kids.setdefault(ppid, []).append(int(d))
    return kids


_SHARED_LOCK = threading.Lock()
_shared: tuple[float, dict[int, list[int]]] = (float("-inf"), {})


def shared_children_map(max_age_s: float) -> dict[int, list[int]]:
    """The host's parent links as one recent scan that every watchdog of this process shares:
    a scan reads every /proc/<pid>/stat (about 18 us each in Python, under the GIL), and with
    fifteen build workers and three judging lanes, each of ~27 watchdogs scanning a busy host
    four times a second kept the GIL of the judging process busy. The scan is taken again once
    it is older than ``max_age_s``. Freezing and killing a tree always scan afresh."""
    global _shared
    with _SHARED_LOCK:
        at, kids = _shared
        now = time.monotonic()
        if now - at > max_age_s:
            kids = _children_map()
            _shared = (time.monotonic(), kids)
        return kids


def descendants(pid: int, kids: dict[int, list[int]] | None = None) -> list[int]:
    """pid and all its descendants (by parent links in /proc)."""
    kids = _children_map() if kids is None else kids
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(kids.get(p, []))
    return out


def _rss_bytes(pids: list[int], shared_allowance: int = 0) -> int:
    """Resident memory of ``pids``. With ``shared_allowance`` (the judgement's arena mapped in
    the worker, sandbox/worker/arena.py: shmem the parent sized), up to that many bytes of the tree's
    resident shmem are not counted; shmem beyond it (MAP_SHARED|MAP_ANONYMOUS memory) is."""
    total = shmem = 0
    page = os.sysconf("SC_PAGE_SIZE")
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * page
            if shared_allowance:
                with open(f"/proc/{p}/status") as f:
                    for line in f:
                        if line.startswith("RssShmem:"):
                            shmem += int(line.split()[1]) * 1024
                            break
        except (OSError, ValueError, IndexError):
            pass
    return total - min(shmem, shared_allowance)


def _dir_bytes(path: str, cap: int = 20000) -> int:
    """Bytes held in files under ``path`` (a scratch dir); more than ``cap`` entries counts as
    unbounded (a candidate cannot hide usage behind millions of files)."""
    total, seen, stack = 0, 0, [path]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for e in it:
                seen += 1
                if seen > cap:
                    return 1 << 62
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    else:
                        total += e.stat(follow_symlinks=False).st_blocks * 512
                except OSError:
                    pass
    return total


def _threads_stopped(pids: list[int]) -> bool:
    """Every thread of ``pids`` is in the stopped state (or gone)."""
    for p in pids:
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            try:
                with open(f"/proc/{p}/task/{t}/stat", "rb") as f:
                    s = f.read()
            except OSError:
                continue
            if _state_and_ppid(s)[0] not in (b"T", b"t", b"Z", b"X"):
                return False
    return True


def stop_tree(pid: int, settle_s: float = 0.5) -> list[int]:
    """SIGSTOP ``pid`` and all its descendants, again for any that appear meanwhile, and wait
    (up to ``settle_s``) until every one of their threads is stopped. Returns the pids stopped
    (give them to :func:`continue_tree`). What the tree holds in memory cannot change until then."""
    stopped: list[int] = []
    for _ in range(8):
        new = [p for p in descendants(pid) if p not in stopped]
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
                stopped.append(p)
            except (ProcessLookupError, PermissionError):
                pass
    end = time.monotonic() + settle_s
    while not _threads_stopped(stopped) and time.monotonic() < end:
        time.sleep(0.0002)
    return stopped


def continue_tree(pids: list[int]) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGCONT)
        except (ProcessLookupError, PermissionError):
            pass
