"""Find and describe the container engine (Docker, or podman's Docker-compatible API).

One job: turn "where is the engine?" into a connected ``docker.DockerClient`` plus an
``EngineInfo`` that ``harness doctor`` and ``verdict.environment`` can print. Also the
cleanup of containers that a crashed harness left behind (by label, dead owner pid).

Order of lookup: ``$DOCKER_HOST``, then the usual sockets (podman rootful/rootless, docker).
"""

from __future__ import annotations

import os
import socket
from dataclasses import asdict, dataclass
from typing import Any

LABEL = "kernel-harness"  # every container the harness starts carries LABEL=1
LABEL_PID = "kernel-harness.pid"  # pid of the harness process that started it
LABEL_HOST = "kernel-harness.host"  # hostname of that process
LABEL_ROLE = "kernel-harness.role"  # reference | candidate | method | ...


from sandbox.isolation.base import SandboxUnavailable  # noqa: E402  (re-exported: docker's setup errors)


class EngineUnavailable(SandboxUnavailable):
    """No Docker-API engine answered; the message says where we looked and how to start one."""


@dataclass(frozen=True)
class EngineInfo:
    available: bool
    name: str = ""  # "Docker Engine" | "Podman Engine" | ...
    version: str = ""
    api_version: str = ""
    base_url: str = ""
    podman: bool = False
    error: str = ""

    def line(self) -> str:
        if not self.available:
            return f"docker: unavailable ({self.error})"
        return f"docker: {self.name} {self.version} (API {self.api_version}) at {self.base_url}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def candidate_urls() -> list[str]:
    urls = []
    if os.environ.get("DOCKER_HOST"):
        urls.append(os.environ["DOCKER_HOST"])
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        urls.append(f"unix://{xdg}/podman/podman.sock")
    urls += ["unix:///run/podman/podman.sock", "unix:///var/run/docker.sock"]
    seen: list[str] = []
    for u in urls:
        if u not in seen:
            seen.append(u)
    return seen


def _unix_path(url: str) -> str | None:
    return url[len("unix://"):] if url.startswith("unix://") else None


def _pings(url: str, timeout: float = 2.0) -> bool:
    """Cheap check before handing the URL to the SDK (whose errors are long)."""
    path = _unix_path(url)
    if path is None:
        return True  # tcp:// etc.: let the SDK try
    if not os.path.exists(path):
        return False
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")
        return b" 200 " in s.recv(256)
    except OSError:
        return False
    finally:
        s.close()


def connect(base_url: str | None = None, timeout: int = 120):
    """A connected ``docker.DockerClient``; raises ``EngineUnavailable`` with what to do."""
    try:
        import docker
    except ImportError as e:  # pragma: no cover - docker is a dependency
        raise EngineUnavailable("the 'docker' Python package is missing: pip install docker") from e
    urls = [base_url] if base_url else candidate_urls()
    errors = []
    for url in urls:
        if not _pings(url):
            errors.append(f"{url}: no answer")
            continue
        try:
            client = docker.DockerClient(base_url=url, timeout=timeout)
            client.ping()
            client.kh_url = url  # the URL that answered (the SDK shows unix sockets as localhost)
            return client
        except Exception as e:  # noqa: BLE001 - report every URL's failure
            errors.append(f"{url}: {e}")
    raise EngineUnavailable(
        "no Docker-API engine answered (" + "; ".join(errors) + "). Start one: "
        "`eval \"$(scripts/podman_service.sh)\"` (podman) or start dockerd, then set DOCKER_HOST."
    )


def describe_client(client) -> EngineInfo:
    v = client.version()
    comps = v.get("Components") or []
    name = comps[0].get("Name", "") if comps else v.get("Platform", {}).get("Name", "")
    name = name or "Docker Engine"
    return EngineInfo(
        available=True,
        name=name,
        version=str(v.get("Version", "")),
        api_version=str(v.get("ApiVersion", "")),
        base_url=str(getattr(client, "kh_url", client.api.base_url)),
        podman="podman" in name.lower(),
    )


def probe(base_url: str | None = None) -> EngineInfo:
    """Which engine answers here (for ``harness doctor``); never raises."""
    try:
        client = connect(base_url, timeout=10)
    except EngineUnavailable as e:
        return EngineInfo(available=False, error=str(e))
    try:
        return describe_client(client)
    except Exception as e:  # noqa: BLE001
        return EngineInfo(available=False, error=f"version query failed: {e}")
    finally:
        client.close()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cleanup_leftovers(client, *, all_owners: bool = False) -> list[str]:
    """Remove labelled containers whose harness process on this host is gone.

    Containers of a live harness (another run on this machine) are left alone unless
    ``all_owners``. Returns the short ids removed.
    """
    removed = []
    host = socket.gethostname()
    for c in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        labels = c.labels or {}
        try:
            pid = int(labels.get(LABEL_PID, "0"))
        except ValueError:
            pid = 0
        mine_host = labels.get(LABEL_HOST) == host
        if not all_owners and mine_host and pid and _pid_alive(pid):
            continue
        if not all_owners and not mine_host:
            continue  # another machine's harness shares this engine: not ours to judge
        try:
            c.remove(force=True)
            removed.append(c.short_id)
        except Exception:  # noqa: BLE001 - already gone
            pass
    return removed
