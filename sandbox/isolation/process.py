"""Process backend: one worker = one fresh process group in its own namespaces.

Preference order, probed once per interpreter and cached:
1. ``bwrap``: no network, own PID namespace, read-only root, private /tmp, rw binds only for
   the worker's scratch, the build cache and the channel dir; tmpfs over hidden paths.
2. ``unshare --net --pid --fork --kill-child --mount-proc`` (root on the lent GPU machine,
   which has no bwrap): no network, own PID namespace; files guarded by the audit hook only.
3. plain subprocess, with a loud warning (``harness doctor`` says so too).

Always: new session/process group, scrubbed env (done by the caller), rlimits (AS on CPU
only, FSIZE, CPU, CORE=0, NPROC when not root), PR_SET_PDEATHSIG(SIGKILL), and a watchdog
thread that counts the worker's descendant processes (root ignores RLIMIT_NPROC) and their
RSS, killing the whole tree above the limits.
"""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

from sandbox.isolation.base import Limits, WorkerSpec

PR_SET_PDEATHSIG = 1


@functools.lru_cache(maxsize=1)
def probe() -> str:
    """Which isolation works here: 'bwrap', 'unshare' or 'none' (cached)."""
    if os.environ.get("HARNESS_ISOLATION") in ("bwrap", "unshare", "none"):
        return os.environ["HARNESS_ISOLATION"]
    if shutil.which("bwrap"):
        try:
            r = subprocess.run(_bwrap_prefix(None) + ["true"], capture_output=True, timeout=20)
            if r.returncode == 0:
                return "bwrap"
        except (OSError, subprocess.TimeoutExpired):
            pass
    if shutil.which("unshare"):
        try:
            r = subprocess.run(_unshare_prefix() + ["true"], capture_output=True, timeout=20)
            if r.returncode == 0:
                return "unshare"
        except (OSError, subprocess.TimeoutExpired):
            pass
    return "none"


def _bwrap_prefix(spec: WorkerSpec | None) -> list[str]:
    a = ["bwrap", "--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session",
         "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # the fresh /tmp hides anything the worker needs that lives there (a checkout or venv in /tmp,
    # as in CI clones): bind those back read-only
    for keep in _code_paths_under("/tmp"):
        a += ["--ro-bind", keep, keep]
    if spec is not None:
        for h in spec.hide:
            if os.path.isdir(h):
                a += ["--tmpfs", h]
        for m in spec.mounts:
            if os.path.exists(m.source):
                a += ["--bind" if m.writable else "--ro-bind", m.source, m.target]
        a += ["--bind", spec.scratch, spec.scratch, "--chdir", spec.cwd]
    return a + ["--"]


def _code_paths_under(top: str) -> list[str]:
    """The repository, the interpreter's prefixes and PYTHONPATH entries that lie under ``top``."""
    repo = Path(__file__).resolve().parents[2]
    cands = [repo, Path(sys.prefix), Path(sys.base_prefix)]
    cands += [Path(x) for x in os.environ.get("PYTHONPATH", "").split(os.pathsep) if x]
    out: list[str] = []
    for c in cands:
        c = c.resolve()
        if c.is_dir() and c.is_relative_to(top) and str(c) != top and str(c) not in out:
            out.append(str(c))
    return sorted(out)


def _unshare_prefix() -> list[str]:
    return ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]


def _preexec(limits: Limits) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.niceness > 0:  # a background worker; both are inherited by the compilers it starts
        os.nice(limits.niceness)
        try:  # SCHED_IDLE: runs only on CPU time no normal task wants, preempted at once
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except (AttributeError, OSError):
            pass
    if limits.address_space_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes,) * 2)
    if limits.file_size_bytes:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes,) * 2)
    if limits.cpu_seconds:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds,) * 2)
    if os.geteuid() != 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes * 4,) * 2)


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
        ppid = int(s[s.rfind(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def descendants(pid: int) -> list[int]:
    """pid and all its descendants (by parent links in /proc)."""
    kids = _children_map()
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(kids.get(p, []))
    return out


def _rss_bytes(pids: list[int]) -> int:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            pass
    return total


class ProcessHandle:
    def __init__(self, proc: subprocess.Popen, isolation: str, limits: Limits) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.isolation = isolation
        self.limits = limits
        self._violation: str | None = None
        self._stop = threading.Event()
        self._watch = threading.Thread(target=self._watchdog, daemon=True, name="kh-watchdog")
        self._watch.start()

    def _watchdog(self) -> None:
        while not self._stop.wait(0.25):
            if self.proc.poll() is not None:
                return
            pids = descendants(self.pid)
            if len(pids) > self.limits.max_processes:
                self._violation = f"processes: {len(pids)} > limit {self.limits.max_processes}"
                self.kill()
                return
            if self.limits.rss_bytes and _rss_bytes(pids) > self.limits.rss_bytes:
                self._violation = f"resident memory above {self.limits.rss_bytes} bytes"
                self.kill()
                return

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        for _ in range(3):
            pids = descendants(self.pid) if self.proc.poll() is None else []
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

    def violation(self) -> str | None:
        return self._violation


class ProcessLauncher:
    name = "process"

    def describe(self) -> str:
        iso = probe()
        if iso == "none":
            return "process: plain subprocess (WARNING: no network/PID/filesystem isolation)"
        return f"process: {iso} (no network, own PID namespace" + (
            ", read-only root, private /tmp)" if iso == "bwrap" else ")"
        )

    def start(self, spec: WorkerSpec) -> ProcessHandle:
        iso = probe() if not spec.network else "none"
        if iso == "bwrap":
            argv = _bwrap_prefix(spec) + spec.argv
        elif iso == "unshare":
            argv = _unshare_prefix() + spec.argv
        else:
            argv = list(spec.argv)
            if not spec.network:
                warnings.warn(
                    "kernel-harness: neither bwrap nor unshare works here: the candidate runs "
                    "WITHOUT network/PID isolation (see `harness doctor`)",
                    RuntimeWarning,
                    stacklevel=2,
                )
        log = open(spec.log_path or os.devnull, "ab")  # noqa: SIM115
        try:
            proc = subprocess.Popen(
                argv,
                env=spec.env,
                cwd=spec.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                preexec_fn=functools.partial(_preexec, spec.limits),  # noqa: PLW1509
            )
        finally:
            log.close()
        return ProcessHandle(proc, iso, spec.limits)


if __name__ == "__main__":
    print(ProcessLauncher().describe(), file=sys.stderr)
    time.sleep(0)
