"""The process watchdog counts the jail's own tmpfs as the worker's memory, never the host's /tmp.

Between the jail's PID 1 being forked and its pivot into the new root, /proc/PID/root/tmp is the
host's /tmp: counting its disk usage (tens of GB) as memory killed starting workers (SIGKILL, a
"reference worker did not start" SandboxUnavailable) at random, more often on a loaded machine.
Here the watchdog's PID 1 is a process that never left the host's root."""

from __future__ import annotations

import subprocess
import sys

from sandbox.isolation.base import Limits
from sandbox.isolation.prochandle import ProcessHandle
from tests.support.capabilities import needs_isolation


def test_a_pid_1_still_on_the_hosts_root_counts_no_tmp_bytes(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        h = ProcessHandle(sleeper, "jail", Limits(), str(tmp_path), root=str(tmp_path))
        h._stop.set()  # no watchdog thread for this check
        kids = {sleeper.pid: [sleeper.pid + 10**7], sleeper.pid + 10**7: [sleeper.pid]}  # launcher -> C1 -> "PID 1"
        assert h._jail_tmp_bytes(kids) == 0
    finally:
        sleeper.kill()
        sleeper.wait()


@needs_isolation
def test_a_started_workers_tmpfs_is_counted(tmp_path):
    """The other side: once inside, what the worker writes to its /tmp counts (1 MiB here)."""
    import time

    from sandbox.isolation.base import WorkerSpec
    from sandbox.isolation.process import ProcessLauncher

    code = "import os; open('/tmp/blob', 'wb').write(os.urandom(1 << 20)); import time; time.sleep(60)"
    spec = WorkerSpec(argv=[sys.executable, "-S", "-c", code], env={"PATH": "/usr/bin:/bin"}, cwd="/",
                      scratch=str(tmp_path))
    h = ProcessLauncher().start(spec)
    try:
        from sandbox.isolation.proctree import shared_children_map

        deadline = time.monotonic() + 60
        got = 0
        while time.monotonic() < deadline and got < (1 << 20):
            time.sleep(0.2)
            got = h._jail_tmp_bytes(shared_children_map(0.0))
        assert got >= 1 << 20, got
    finally:
        h.kill()
