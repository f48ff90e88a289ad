"""The executors by name (``--executor``): each factory takes the runner's options and
imports its executor only when asked for (Ray is optional)."""

from __future__ import annotations

from harness.executors.base import Executor
from sandbox.contract import Registry

EXECUTORS: Registry[Executor] = Registry("executor", option="--executor")


@EXECUTORS.register("serial")
def _serial(**_: object) -> Executor:
    from harness.executors.serial import SerialExecutor

    return SerialExecutor()


@EXECUTORS.register("local")
def _local(*, compile_workers: int | None = None, compile_cuts: bool = True, **_: object) -> Executor:
    from harness.executors.local import LocalExecutor

    return LocalExecutor(compile_workers=compile_workers, compile_cuts=compile_cuts)


@EXECUTORS.register("ray")
def _ray(*, ray_address: str | None = None, compile_cuts: bool = True, **_: object) -> Executor:
    from harness.executors.ray_executor import RayExecutor

    return RayExecutor(address=ray_address, compile_cuts=compile_cuts)


def make_executor(name: str, *, ray_address: str | None = None, compile_workers: int | None = None,
                  compile_cuts: bool = True) -> Executor:
    """The executor ``name`` ("serial" | "local" | "ray") with the runner's options."""
    return EXECUTORS.create(name, ray_address=ray_address, compile_workers=compile_workers,
                            compile_cuts=compile_cuts)
