"""Isolation backends that start evaluator workers: ``process`` (namespaces) and ``docker``."""

from __future__ import annotations

from sandbox.isolation.base import Launcher, Limits, SandboxUnavailable, WorkerHandle, WorkerSpec


def get_launcher(name: str, unsafe: bool = False) -> Launcher:
    """The launcher for ``EvalConfig.sandbox``; docker is imported lazily (optional backend).
    ``unsafe`` (``--unsafe-no-isolation``): the process backend may run a plain subprocess
    where no jail can be made."""
    if name == "process":
        from sandbox.isolation.process import ProcessLauncher

        return ProcessLauncher(unsafe=unsafe)
    if name == "docker":
        import importlib

        mod = importlib.import_module("sandbox.isolation.docker_backend")
        return mod.DockerLauncher()
    raise ValueError(f"unknown sandbox backend {name!r}: use 'process' or 'docker'")


__all__ = ["Launcher", "Limits", "SandboxUnavailable", "WorkerHandle", "WorkerSpec", "get_launcher"]
