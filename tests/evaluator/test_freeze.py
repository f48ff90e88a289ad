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
        fresh = proctree.shared_children_map(0.0)
        assert fresh is not first
        assert p.pid in descendants(os.getpid(), fresh)
    finally:
        p.kill()
        p.wait()
