"""Isolation backends that start evaluator workers: ``process`` (namespaces) and ``docker``."""

from __future__ import annotations

from sandbox.isolation.base import Launcher, Limits, WorkerHandle, WorkerSpec


def get_launcher(name: str) -> Launcher:
    """The launcher for ``EvalConfig.sandbox``; docker is imported lazily (optional backend)."""
    if name == "process":
        from sandbox.isolation.process import ProcessLauncher

        return ProcessLauncher()
    if name == "docker":
        import importlib

        mod = importlib.import_module("sandbox.isolation.docker_backend")
        return mod.DockerLauncher()
    raise ValueError(f"unknown sandbox backend {name!r}: use 'process' or 'docker'")


__all__ = ["Launcher", "Limits", "WorkerHandle", "WorkerSpec", "get_launcher"]
