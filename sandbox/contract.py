"""The evaluator's contract: everything the orchestrator (``harness/``) uses of the evaluator,
in one module. ``harness/`` imports the evaluator only from here (tests/architecture checks it);
the evaluator imports nothing of ``harness/``.

- the task format: ``Task``, ``OpMeta``, ``load_task``, ``TaskError``; the task check
  (sandbox/intake/taskcheck.py): ``check_tasks``, ``TaskCheck``, ``DegenerateTask``, ``task_check_timing``
- what to judge with: ``EvalConfig``, the rule sets (``RULE_SETS``, ``STRICT``)
- what comes back: ``Verdict``, ``Status``, ``Mode``; a candidate the judge cannot take:
  ``CandidateError``
- the acts: ``evaluate`` (judge one candidate), ``prepare_trusted`` (its trusted helpers built
  ahead), ``prebuild`` / ``BuildResult``
  (build ahead of judging), ``built_before`` (an earlier run built this source into the cache), ``NATIVE_BUILD`` (which sources have extension builds),
  ``precompiled_headers`` (sandbox/build/pch.py: ``abandon()`` when a run is stopped by a signal,
  so a header being built does not hold it, ``reset()`` after), ``thread_workers``
  (sandbox/worker/threadworkers.py: ``stop(thread)`` gives up the builds a thread has in flight when
  a run is stopped)
- the machine and the jail, for ``harness doctor``, the executors and the method endpoints:
  ``fingerprint``, ``package_version``, ``Machine``, ``Gpu``, ``nvidia_smi``, ``get_launcher``,
  ``Launcher``, ``Limits``, ``Mount``, ``WorkerSpec``, ``SandboxUnavailable``,
  ``isolation_probe``, ``engine_probe``
- name registries (methods, executors, LLM backends, isolation): ``Registry``, ``UnknownName``,
  ``load_target``
- the device lanes, for the executors: ``parked_judgements`` (judgements that gave their device
  up during a slow first call, sandbox/lane/firstcall.py) and ``machine_slots`` (judgements in
  flight per GPU counted across the machine's harness processes, sandbox/lane/slots.py),
  ``spare_references`` (reference workers an executor starts ahead of the judgements that take
  them, sandbox/lane/spares.py), ``gpu_alone`` (``with gpu_alone():`` a judgement reserves the
  whole GPU's memory, sandbox/lane/gpumem.py)
"""

from __future__ import annotations

from sandbox.build import pch as precompiled_headers
from sandbox.build.buildphase import NATIVE_BUILD
from sandbox.build.prebuild import BuildResult, built_before, prebuild
from sandbox.config import EvalConfig
from sandbox.errors import CandidateError
from sandbox.evaluate import evaluate, prepare_trusted
from sandbox.intake.datasize import gpu_memory_bytes, judgement_gpu_bytes
from sandbox.intake.task import OpMeta, Task, TaskError, load_task
from sandbox.intake.taskcheck import DegenerateTask, TaskCheck, check_tasks
from sandbox.intake.taskcheck import timing_line as task_check_timing
from sandbox.isolation import get_launcher
from sandbox.isolation.base import Launcher, Limits, Mount, SandboxUnavailable, WorkerSpec
from sandbox.isolation.engine import probe as engine_probe
from sandbox.isolation.process import probe as isolation_probe
from sandbox.lane import slots as machine_slots
from sandbox.lane import spares as spare_references
from sandbox.lane.devicelock import parked as parked_judgements
from sandbox.lane.gpumem import alone as gpu_alone
from sandbox.machine import Gpu, Machine, fingerprint, nvidia_smi, package_version
from sandbox.registry import Registry, UnknownName, load_target
from sandbox.rules import RULE_SETS, STRICT
from sandbox.verdict import Mode, Status, Verdict
from sandbox.worker import threadworkers as thread_workers

__all__ = [
    "NATIVE_BUILD", "RULE_SETS", "STRICT", "BuildResult", "CandidateError", "EvalConfig", "Gpu", "Launcher",
    "Limits", "Machine", "Mode", "Mount", "OpMeta", "Registry", "SandboxUnavailable", "Status", "Task",
    "TaskError", "UnknownName", "Verdict", "WorkerSpec", "engine_probe", "evaluate",
    "fingerprint", "get_launcher", "isolation_probe", "load_target", "load_task", "nvidia_smi",
    "package_version", "prebuild", "built_before",
    "DegenerateTask", "TaskCheck", "check_tasks", "task_check_timing",
    "parked_judgements", "machine_slots", "precompiled_headers", "thread_workers", "spare_references",
    "gpu_alone",
    "gpu_memory_bytes", "judgement_gpu_bytes", "prepare_trusted",
]
