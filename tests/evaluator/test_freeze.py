"""The output checks' freeze (sandbox/isolation/proctree.py): a stopped tree burns no CPU, in
any of its processes or threads, until it is continued."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from sandbox.isolation.proctree import continue_tree, descendants, stop_tree

# a parent with a spinning thread and a spinning child process
SPINNER = r"""
import os, threading, time
def spin():
    while True:
        pass
threading.Thread(target=spin, daemon=True).start()
if os.fork() == 0:
    spin()
print("up", flush=True)
spin()
"""


def _cpu_ticks(pids: list[int]) -> int:
    total = 0
    for p in pids:
        with open(f"/proc/{p}/stat", "rb") as f:
            s = f.read()
        fields = s[s.rfind(b")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])  # utime + stime of all its threads
    return total


def test_stop_tree_stops_every_process_and_thread_until_continued():
    proc = subprocess.Popen([sys.executable, "-c", SPINNER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "up"
        tree = descendants(proc.pid)
        assert len(tree) == 2
        stopped = stop_tree(proc.pid)
        assert sorted(stopped) == sorted(tree)
        before = _cpu_ticks(tree)
        time.sleep(0.5)
        assert _cpu_ticks(tree) == before  # nothing ran while stopped
        continue_tree(stopped)
        time.sleep(0.5)
        assert _cpu_ticks(tree) > before  # and it runs again
    finally:
        for p in reversed(descendants(proc.pid)):
            subprocess.run(["kill", "-9", str(p)], check=False)
        proc.wait(5)


def test_watchdogs_share_one_recent_host_scan_and_see_a_new_process_once_it_is_old():
    """Every watchdog of the judging process reads the host's process table through one shared
    scan (proctree.shared_children_map): within its age the same scan is handed out (no /proc
    walk), after it a fresh one that holds processes started since."""
    from sandbox.isolation import proctree

    first = proctree.shared_children_map(60.0)
    assert proctree.shared_children_map(60.0) is first  # no second walk of /proc within the age
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        stale = proctree.shared_children_map(60.0)
        assert p.pid not in descendants(os.getpid(), stale)
        time.sleep(0.2)  # past the last walk's cost / SCAN_SHARE too (a walk here takes a few ms)
        fresh = proctree.shared_children_map(0.0)
        assert fresh is not first
        assert p.pid in descendants(os.getpid(), fresh)
    finally:
        p.kill()
        p.wait()


# forks from a side thread as well as the main one, and keeps forking (children that fork once more) for
# about a second: at most 2 x 40 children and 40 grandchildren, each asleep (bounded: no fork bomb)
FORKER = r"""
import os, threading, time
def forker(n, depth):
    for _ in range(n):
        if os.fork() == 0:
            if depth:
                forker(1, depth - 1)
            time.sleep(30)
            os._exit(0)
        time.sleep(0.025)
    time.sleep(30)
threading.Thread(target=forker, args=(40, 1), daemon=True).start()
print("up", flush=True)
forker(40, 0)
"""


def _state(pid: int) -> bytes:
    with open(f"/proc/{pid}/stat", "rb") as f:
        s = f.read()
    return s[s.rfind(b")") + 2 :].split()[0]


def test_the_tree_read_from_its_own_children_lists_is_the_whole_scans_tree_and_a_forking_tree_stops_whole():
    """``tree`` (each thread's children list, O(tree)) finds what the host-wide scan finds, children of a
    side thread included; and a tree that keeps forking from two threads is stopped whole: after
    ``stop_tree`` every process the host-wide scan puts in it is stopped, none left running."""
    from sandbox.isolation import proctree

    assert proctree._children_files()  # the kernels we judge on have the lists; else tree() is the scan
    proc = subprocess.Popen([sys.executable, "-c", FORKER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "up"
        time.sleep(0.3)
        stopped = stop_tree(proc.pid)
        whole = descendants(proc.pid)  # the ground truth, read once everything is stopped
        assert len(whole) >= 4 and sorted(proctree.tree(proc.pid)) == sorted(whole)
        assert set(whole) <= set(stopped)
        assert all(_state(p) in (b"T", b"t") for p in whole), [(p, _state(p)) for p in whole]
    finally:
        for p in stop_tree(proc.pid):  # stopped first: none forks while the tree is killed
            os.kill(p, 9)
        proc.wait(5)


def test_the_shared_scan_is_taken_less_often_where_it_is_slow(monkeypatch):
    """On a host whose walk of /proc is slow, the watchdogs' shared scan is reused for longer (its cost
    / SCAN_SHARE), so it never holds the judging process's GIL more than that share of the time."""
    from sandbox.isolation import proctree

    walks = []

    def slow_walk():
        walks.append(time.monotonic())
        time.sleep(0.1)  # a walk of several thousand processes
        return {}

    monkeypatch.setattr(proctree, "_shared", (float("-inf"), {}, 0.0))
    monkeypatch.setattr(proctree, "_children_map", slow_walk)
    proctree.shared_children_map(0.05)
    time.sleep(0.1)  # older than max_age_s, younger than 0.1 s / SCAN_SHARE
    proctree.shared_children_map(0.05)
    assert len(walks) == 1
    time.sleep(0.1 / proctree.SCAN_SHARE)
    proctree.shared_children_map(0.05)
    assert len(walks) == 2
