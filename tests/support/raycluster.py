"""A Ray cluster of several nodes on this host, started as a user starts one (``ray start``).

Each node is its own raylet with its own resources and its own environment: ``node_env[i]`` is
added to node i's (the test gives each its own ``HARNESS_CACHE``, as separate hosts have separate
disks). Token authentication is off (``RAY_AUTH_MODE=disabled``): every node listens on loopback
only. Each ``ray start --block`` runs in its own process group, which ``stop`` ends; nothing else
on the machine is touched (``ray stop`` would end every Ray of the host).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    address: str
    env: dict[str, str]  # what a driver needs in its environment to join
    procs: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def status(self) -> str:
        r = subprocess.run([RAY, "status", "--address", self.address], env=self.env, capture_output=True,
                           text=True, timeout=120)
        return r.stdout + r.stderr

    def alive_nodes(self) -> int:
        return self.status().count("node_")

    def log_tails(self) -> str:
        return "\n".join(f"--- {p.name}\n" + p.read_text(errors="replace")[-3000:] for p in self.logs if p.exists())

    def stop(self) -> None:
        """SIGTERM to each node's group, then SIGKILL after 5 s (a raylet's clean stop takes 30 s
        or more here; its workers end with it either way)."""
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.time() + 5
        for p in reversed(self.procs):
            try:
                p.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(30)


@contextmanager
def ray_cluster(tmp: Path, node_env: Sequence[dict[str, str]], cpus_per_node: int = 1,
                timeout: float = 300) -> Iterator[Cluster]:
    """``len(node_env)`` nodes (the first the head), each with ``cpus_per_node`` CPUs and no GPU."""
    port, client = _free_port(), _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_agent_register_timeout_ms": "180000",
           "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus_per_node), "--num-gpus", "0",
              "--disable-usage-stats", "--block"]
    cluster = Cluster(address=f"127.0.0.1:{port}", env=env)
    try:
        for i, extra in enumerate(node_env):
            args = (["--head", "--port", str(port), "--ray-client-server-port", str(client),
                     "--include-dashboard", "false"] if i == 0 else ["--address", cluster.address])
            log = tmp / f"ray-node{i}.log"
            cluster.logs.append(log)
            with open(log, "w") as out:
                cluster.procs.append(subprocess.Popen([RAY, "start", *args, *common], env={**env, **extra},
                                                      stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
            deadline = time.time() + timeout
            while cluster.alive_nodes() < i + 1:
                dead = [p for p in cluster.procs if p.poll() is not None]
                if dead or time.time() > deadline:
                    raise RuntimeError(f"Ray node {i} did not join within {timeout:.0f} s\n{cluster.log_tails()}")
                time.sleep(1)
        yield cluster
    finally:
        cluster.stop()
