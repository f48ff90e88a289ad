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

_BIN = Path(sys.executable).with_name("ray")  # the venv's ray; where Ray was installed with --target, its module
RAY = [str(_BIN)] if _BIN.exists() else [sys.executable, "-m", "ray.scripts.scripts"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    address: str
    env: dict[str, str]  # what a driver needs in its environment to join
    tmp: Path = Path(".")
    client_port: int = 0
    procs: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def add(self, extra: dict[str, str], cpus: int = 1, gpus: int = 0, timeout: float = 300) -> None:
        """Start one more node (the first is the head) with its own environment on top of the
        cluster's, ``cpus`` CPUs and ``gpus`` GPUs (give it ``CUDA_VISIBLE_DEVICES`` to choose
        which), and wait until it has joined."""
        i = len(self.procs)
        args = (["--head", "--port", self.address.rsplit(":", 1)[1], "--ray-client-server-port",
                 str(self.client_port), "--include-dashboard", "false"] if i == 0 else ["--address", self.address])
        log = self.tmp / f"ray-node{i}.log"
        self.logs.append(log)
        with open(log, "w") as out:
            self.procs.append(subprocess.Popen(
                [*RAY, "start", *args, "--node-ip-address", "127.0.0.1", "--num-cpus", str(cpus), "--num-gpus",
                 str(gpus), "--disable-usage-stats", "--block"], env={**self.env, **extra}, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.time() + timeout
        while self.alive_nodes() < i + 1:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead or time.time() > deadline:
                raise RuntimeError(f"Ray node {i} did not join within {timeout:.0f} s\n{self.log_tails()}")
            time.sleep(1)

    def status(self) -> str:
        r = subprocess.run([*RAY, "status", "--address", self.address], env=self.env, capture_output=True,
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
def ray_cluster(tmp: Path, node_env: Sequence[dict[str, str]], cpus_per_node: int = 1, gpus_per_node: int = 0,
                timeout: float = 300) -> Iterator[Cluster]:
    """``len(node_env)`` nodes (the first the head), each with ``cpus_per_node`` CPUs and ``gpus_per_node``
    GPUs; ``cluster.add`` starts more."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_agent_register_timeout_ms": "180000",
           "RAY_USAGE_STATS_ENABLED": "0"}
    cluster = Cluster(address=f"127.0.0.1:{_free_port()}", env=env, tmp=tmp, client_port=_free_port())
    try:
        for extra in node_env:
            cluster.add(extra, cpus_per_node, gpus_per_node, timeout)
        yield cluster
    finally:
        cluster.stop()
