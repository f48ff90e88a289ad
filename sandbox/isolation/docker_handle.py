"""A started container as the evaluator's ``WorkerHandle``: poll, wait, kill, then remove.

The container is removed as soon as its end is observed (logs copied first); every container
this process started is also removed at interpreter exit. A SIGKILLed harness runs neither:
``engine.cleanup_leftovers`` (on the next start) and the in-container ``timeout`` cover that.
Exit codes follow ``subprocess``: a container killed by signal N reports ``-N``.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable

_started: dict[str, object] = {}  # container id -> container, removed at interpreter exit
_lock = threading.Lock()


def track(container) -> Callable[[], None]:
    """Remember ``container`` for removal at exit; returns the function that forgets it."""
    with _lock:
        _started[container.id] = container
    return lambda: _forget(container.id)


def _forget(cid: str) -> None:
    with _lock:
        _started.pop(cid, None)


class ContainerHandle:
    """A started container, as a ``WorkerHandle``. Removes the container once it is over."""

    isolation = "docker"

    def __init__(self, container, log_path: str | None, wall_s: float,
                 memory_bytes: int | None = None, quotas: tuple[tuple[str, int], ...] = ()) -> None:
        self.container = container
        self.log_path = log_path
        self.memory_bytes = memory_bytes
        self._killed = False
        container.reload()
        self.pid = int(container.attrs.get("State", {}).get("Pid") or 0)
        self._status: int | None = None
        self._violation: str | None = None
        self._deadline = time.monotonic() + wall_s
        self._done = threading.Lock()
        if quotas:  # a writable build tier with a size quota (sandbox/build/tiers.py): watched from here
            threading.Thread(target=self._watch_quotas, args=(tuple(quotas),), daemon=True,
                             name="kh-quota").start()

    def _watch_quotas(self, quotas: tuple[tuple[str, int], ...]) -> None:
        from sandbox.build.tiers import over_quota

        while self._status is None:
            for path, limit in quotas:
                over = over_quota(path, limit)
                if over:
                    self._violation = over
                    self.kill()
                    return
            time.sleep(0.5)

    def _finish(self, state: dict) -> int:
        """Record exit status, OOM, logs; remove the container (idempotent)."""
        with self._done:
            if self._status is not None:
                return self._status
            code = int(state.get("ExitCode", -9) or 0)
            if state.get("OOMKilled"):
                self._violation = "memory: the container hit its memory limit (OOM-killed)"
            elif code == 137 and not self._killed and time.monotonic() < self._deadline:
                # SIGKILL from inside before the backstop: only the kernel's OOM killer does
                # that (podman reports OOMKilled for the container's pid 1 only).
                lim = f" of {self.memory_bytes // 2**20} MiB" if self.memory_bytes else ""
                self._violation = f"memory: SIGKILLed inside the container (memory limit{lim})"
            elif code == 137 and not self._killed:
                self._violation = "wall: the in-container backstop (timeout -s KILL) ended it"
            self._status = -(code - 128) if code > 128 else code
            self._save_logs()
            self._remove()
            return self._status

    def _save_logs(self) -> None:
        if not self.log_path:
            return
        try:
            data = self.container.logs(stdout=True, stderr=True)
            with open(self.log_path, "ab") as f:
                f.write(data)
        except Exception:  # noqa: BLE001 - logs are best effort
            pass

    def _remove(self) -> None:
        try:
            self.container.remove(force=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
        _forget(self.container.id)

    def poll(self) -> int | None:
        if self._status is not None:
            return self._status
        import docker

        try:
            self.container.reload()
        except docker.errors.NotFound:  # removed behind our back
            return self._finish({"ExitCode": 137})
        except Exception:  # noqa: BLE001 - a transient API error: ask again at the next poll
            return None
        state = self.container.attrs.get("State", {})
        if state.get("Status") in ("exited", "dead", "stopped"):
            return self._finish(state)
        if time.monotonic() > self._deadline:
            self._violation = "wall: the container outlived its wall_seconds backstop"
            self.kill()
            return self._status
        return None

    def wait(self, timeout: float | None = None) -> int | None:
        end = None if timeout is None else time.monotonic() + timeout
        delay = 0.02
        while True:
            st = self.poll()
            if st is not None:
                return st
            if end is not None and time.monotonic() >= end:
                return None
            time.sleep(delay if end is None else max(0.0, min(delay, end - time.monotonic())))
            delay = min(delay * 1.5, 0.25)

    def kill(self) -> None:
        if self._status is not None:
            return
        self._killed = True
        try:
            self.container.kill()
        except Exception:  # noqa: BLE001 - already exited
            pass
        state = {"ExitCode": 137}
        try:
            self.container.reload()
            st = self.container.attrs.get("State", {})
            if st.get("Status") in ("exited", "dead", "stopped"):
                state = st
        except Exception:  # noqa: BLE001
            pass
        self._finish(state)

    def violation(self) -> str | None:
        return self._violation

    def freeze(self) -> bool:
        """Pause the container (the cgroup freezer): every process in it stops."""
        try:
            self.container.pause()
            return True
        except Exception:  # noqa: BLE001 - exited, or no freezer: the check runs unfrozen
            return False

    def thaw(self, token: bool) -> None:
        if token:
            try:
                self.container.unpause()
            except Exception:  # noqa: BLE001
                pass


@atexit.register
def _remove_started() -> None:
    """A normal interpreter exit removes every container this process started."""
    with _lock:
        items = list(_started.values())
        _started.clear()
    for c in items:
        try:
            c.remove(force=True)
        except Exception:  # noqa: BLE001
            pass
