"""The launcher protocol: how an isolation backend starts, waits for and kills one worker.

A backend (process namespaces, docker) turns a ``WorkerSpec`` into a running worker and
returns a ``WorkerHandle``. The protocol spoken with the worker (sandbox/worker/channel.py,
sandbox/worker/main.py) is independent of the backend: the worker connects to a unix socket
whose directory the backend makes visible at the same path inside the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run here (no engine, no image, no isolation): a setup problem the
    user must fix, never a verdict. The message says what to do."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one worker (None = backend default / unlimited)."""

    address_space_bytes: int | None = None  # RLIMIT_AS (CPU only: CUDA needs huge VA)
    rss_bytes: int | None = None  # watchdog on the group's resident memory
    max_processes: int = 256  # watchdog on processes in the worker's tree
    file_size_bytes: int = 16 * 1024**3  # RLIMIT_FSIZE (scratch usage is also counted by the watchdog)
    cpu_seconds: int | None = None  # RLIMIT_CPU
    wall_seconds: float = 600.0  # the caller kills at its deadline; this is a backstop
    niceness: int = 0  # > 0: a background worker (builds ahead of judging) yields the CPU to judgements
    tmp_bytes: int = 2 * 1024**3  # size of the private tmpfs behind /tmp, /var/tmp and /dev/shm


@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    writable: bool = False


@dataclass(frozen=True)
class WorkerSpec:
    argv: list[str]
    env: dict[str, str]  # already scrubbed to the allowlist
    cwd: str
    scratch: str  # the worker's private writable dir
    mounts: list[Mount] = field(default_factory=list)  # rw/ro binds beyond the read-only root
    hide: list[str] = field(default_factory=list)  # paths to mask (tmpfs) inside the sandbox
    limits: Limits = field(default_factory=Limits)
    network: bool = False
    gpu: bool = False
    log_path: str | None = None  # stdout+stderr of the worker go here
    pass_fds: tuple[int, ...] = ()  # inherited fds (the channel), for backends that can pass them
    uid: int | None = None  # root only: the unprivileged outer uid the worker runs as
    connects: bool = False  # may connect(2) to sockets it is shown (a method program's endpoints)
    # (host dir, max bytes): writable dirs with a size quota (a candidate's build tier, sandbox/build/tiers.py);
    # the watchdog kills the worker above one, naming it in ``violation()``
    quotas: tuple[tuple[str, int], ...] = ()


class WorkerHandle(Protocol):
    pid: int
    isolation: str  # e.g. "bwrap", "unshare", "none", "docker"

    def poll(self) -> int | None:
        """Exit status, or None while running."""

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait up to ``timeout``; exit status or None if still running."""

    def kill(self) -> None:
        """Kill the worker and everything it started (whole group / namespace / container)."""

    def violation(self) -> str | None:
        """A resource watchdog's finding (e.g. 'processes: 300 > 256'), if it killed the worker."""

    def freeze(self) -> Any:
        """Stop every process and thread the worker has (nothing in its memory changes until
        ``thaw``); returns a token for ``thaw``."""

    def thaw(self, token: Any) -> None:
        """Let what ``freeze`` stopped run again."""


class Launcher(Protocol):
    name: str

    def start(self, spec: WorkerSpec) -> WorkerHandle: ...

    def describe(self) -> str:
        """One line for ``harness doctor`` and verdict.environment."""
