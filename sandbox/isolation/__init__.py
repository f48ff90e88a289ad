"""Isolation backends that start evaluator workers: ``process`` (namespaces) and ``docker``."""

from __future__ import annotations

from sandbox.isolation.base import Launcher, Limits, SandboxUnavailable, WorkerHandle, WorkerSpec
from sandbox.registry import Registry

LAUNCHERS: Registry[Launcher] = Registry("sandbox backend", option="EvalConfig.sandbox, --sandbox")


@LAUNCHERS.register("process")
def _process(unsafe: bool = False) -> Launcher:
    from sandbox.isolation.process import ProcessLauncher

    return ProcessLauncher(unsafe=unsafe)


@LAUNCHERS.register("docker")
def _docker(unsafe: bool = False) -> Launcher:
    # imported by name: the docker SDK is an optional dependency
    import importlib

    return importlib.import_module("sandbox.isolation.docker_backend").DockerLauncher()


def get_launcher(name: str, unsafe: bool = False) -> Launcher:
    """The launcher for ``EvalConfig.sandbox``; docker is imported lazily (optional backend).
    ``unsafe`` (``--unsafe-no-isolation``): the process backend may run a plain subprocess
    where no jail can be made."""
    return LAUNCHERS.create(name, unsafe=unsafe)


__all__ = ["LAUNCHERS", "Launcher", "Limits", "SandboxUnavailable", "WorkerHandle", "WorkerSpec",
           "get_launcher"]
