"""A worker's process tree as the parent sees it through the host's /proc: descendants by
parent links, their resident memory, and the bytes held in files under a directory. The
watchdog (sandbox/isolation/process.py) kills a jail above its limits with these.

Two ways to find a tree: ``descendants`` reads every process's parent link (the whole host's
/proc, shared by the watchdogs as one recent scan), ``tree`` reads only the tree's own
``/proc/<pid>/task/<tid>/children`` lists. Freezing and killing use ``tree``: they run while a
judgement holds its GPU, and on a busy host the whole scan cost that judgement seconds (four
H200s, four runs at once, 2026-11-27: the freeze of each output check took a median 2.2 s a
judgement, 45% of the GPU's held time; docs/performance.md)."""

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
_shared: tuple[float, dict[int, list[int]], float] = (float("-inf"), {}, 0.0)  # (taken at, map, its cost in s)
SCAN_SHARE = 0.25  # at most this share of the time goes to the shared scan: on a big host it is taken less often


def shared_children_map(max_age_s: float) -> dict[int, list[int]]:
    """The host's parent links as one recent scan that every watchdog of this process shares:
    a scan reads every /proc/<pid>/stat (about 18 us each in Python, under the GIL), and with
    fifteen build workers and three judging lanes, each of ~27 watchdogs scanning a busy host
    four times a second kept the GIL of the judging process busy. The scan is taken again once
    it is older than ``max_age_s``, or than its own cost / SCAN_SHARE where that is longer (with
    thousands of processes a walk takes 50-100 ms: every 0.2 s it would hold the GIL a third of
    the time and more). Freezing and killing never use it (``tree``)."""
    global _shared
    with _SHARED_LOCK:
        at, kids, cost = _shared
        now = time.monotonic()
        if now - at > max(max_age_s, cost / SCAN_SHARE):
            kids = _children_map()
            done = time.monotonic()
            _shared = (done, kids, done - now)
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


_CHILDREN_FILES: bool | None = None


def _children_files() -> bool:
    """Whether this kernel has /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN)."""
    global _CHILDREN_FILES
    if _CHILDREN_FILES is None:
        _CHILDREN_FILES = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    return _CHILDREN_FILES


def _children_of(pid: int) -> list[int]:
    """The children of every thread of ``pid`` (none once it is gone)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/children", "rb") as f:
                out.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            pass
    return out


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants, reading only the tree's own children lists (O(tree), not
    O(host)); the whole scan (``descendants``) where the kernel has no children lists. A list is
    exact for a process whose threads are stopped; ``stop_tree`` reads the tree again once they are."""
    if not _children_files():
        return descendants(pid)
    out, stack, seen = [], [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        out.append(p)
        stack.extend(_children_of(p))
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
    (up to ``settle_s``) until every one of their threads is stopped; then read the tree once more
    (a stopped process's children list is exact) and stop any child forked while its parent was
    being stopped. Returns the pids stopped (give them to :func:`continue_tree`). What the tree
    holds in memory cannot change until then."""
    stopped: list[int] = []
    seen: set[int] = set()
    for _round in range(3):
        for _ in range(8):
            new = [p for p in tree(pid) if p not in seen]
            if not new:
                break
            for p in new:
                seen.add(p)
                try:
                    os.kill(p, signal.SIGSTOP)
                    stopped.append(p)
                except (ProcessLookupError, PermissionError):
                    pass
        end = time.monotonic() + settle_s
        while not _threads_stopped(stopped) and time.monotonic() < end:
            time.sleep(0.0002)
        if not any(p not in seen for p in tree(pid)):
            break
    return stopped


def continue_tree(pids: list[int]) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGCONT)
        except (ProcessLookupError, PermissionError):
            pass
