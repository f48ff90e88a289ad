"""What the judging process's watchdogs cost it per tick (sandbox/isolation/proctree.py).

A batch runs about 27 jailed workers at once (15 build workers, four lanes with up to two
worker pairs each); each worker's watchdog thread ticks four times a second. Before session 10
every tick walked all of /proc; now the ticks of one process share one walk at most 0.2 s old.
The two benchmarks time one round of 27 ticks each way on this machine's process table (on the
H100 under a batch the table is several times larger, and so is the gap)."""

from __future__ import annotations

from sandbox.isolation import proctree
from sandbox.isolation.prochandle import WATCH_SCAN_MAX_AGE_S

WATCHDOGS = 27


def test_27_watchdog_ticks_each_walking_proc(benchmark):
    def tick_all():
        return [proctree._children_map() for _ in range(WATCHDOGS)]

    maps = benchmark(tick_all)
    benchmark.extra_info["host_processes"] = sum(len(v) for v in maps[0].values())


def test_27_watchdog_ticks_sharing_one_walk(benchmark):
    def tick_all():
        return [proctree.shared_children_map(WATCH_SCAN_MAX_AGE_S) for _ in range(WATCHDOGS)]

    maps = benchmark(tick_all)
    assert all(m is maps[0] for m in maps)  # one walk served every tick of the round


def _small_tree():
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-c", "import os, time\nif os.fork() == 0:\n    time.sleep(60)\n"
                             "time.sleep(60)"])


def test_a_freeze_reading_the_whole_host_table(benchmark):
    """The output check's freeze as it was before session 18: each pass of ``stop_tree`` walked all of
    /proc (at least two walks a freeze). Compare with the next benchmark; the gap grows with the
    host's process count (``host_processes``)."""
    p = _small_tree()
    try:
        def freeze():
            return [proctree.descendants(p.pid) for _ in range(2)]

        benchmark(freeze)
        benchmark.extra_info["host_processes"] = sum(len(v) for v in proctree._children_map().values())
    finally:
        p.kill()
        p.wait()


def test_a_freeze_reading_the_trees_own_children_lists(benchmark):
    p = _small_tree()
    try:
        benchmark(lambda: [proctree.tree(p.pid) for _ in range(2)])
        benchmark.extra_info["host_processes"] = sum(len(v) for v in proctree._children_map().values())
    finally:
        p.kill()
        p.wait()
