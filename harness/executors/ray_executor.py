"""The Ray executor: the local pipeline's units of work as Ray tasks on a cluster.

    ex = RayExecutor(address="ray://head:10001")   # None: start a local Ray instance
    verdict = ex.judge(task, source, config)

Per candidate: a build task (``num_cpus=1``; ``sandbox.build.prebuild.prebuild`` in a sandboxed
build-only worker on whichever node Ray picks), then, unless the build was a compile error,
a judge task (for CUDA configs a 1/k share of a GPU, k judging threads per GPU as the local
executor has them; one of them holds the GPU at a time through the machine-wide device lock,
sandbox/lane/devicelock.py, while the others start their workers) pinned softly to the node that built it, so
the judge finds the extension in that node's build cache. Results come back to the driver
(the process that owns the results store); the store is never written by Ray workers. Ray
re-runs a task whose worker or node died (``max_retries``); a candidate's failure is a
verdict, not an exception, so it is never retried.

On a cluster of several nodes (docs/performance.md, "Ray: multi-node setup"): builds are spread over the
nodes (``SPREAD``), each node builds into its own build cache (its own ``HARNESS_CACHE``; the
driver's is passed on only to a Ray it starts itself), and the judge follows its build. Every
node is checked when the executor starts, and every task's node again, against the driver's
judging code, torch and (for GPU judgements) one GPU model per run (harness/executors/raynode.py);
each verdict records the nodes that built and judged it (``evidence.executor``).
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.executors.base import ExecutorStats, GpuWeights
from sandbox.contract import EvalConfig, Task, Verdict

REPO_ROOT = str(Path(__file__).resolve().parents[2])
MAX_RETRIES = 3


_CUTS_DONE = False


def _maybe_cuts(config: EvalConfig, cuts: bool) -> None:
    """The compile cuts on this node, once per Ray worker process (CUDA runs only)."""
    global _CUTS_DONE
    if cuts and not _CUTS_DONE and config.device.startswith("cuda"):
        from harness.executors.cuts import apply_compile_cuts

        apply_compile_cuts()
    _CUTS_DONE = True


def _node() -> Any:
    import ray

    from harness.executors.raynode import identity

    return identity(ray.get_runtime_context().get_node_id())


def _build_task(task: Task, source: str, config: EvalConfig, cuts: bool) -> tuple[Any, Any]:
    from sandbox.contract import prebuild

    _maybe_cuts(config, cuts)
    return prebuild(task, source, config), _node()


def _judge_task(task: Task, source: str, config: EvalConfig, cuts: bool) -> tuple[Verdict, Any]:
    from sandbox.contract import evaluate

    _maybe_cuts(config, cuts)
    return evaluate(task, source, config), _node()


def _probe_task() -> Any:
    return _node()


CLOSED = "the Ray executor was closed before judging this candidate"  # a stopped run (abandon)


class RayExecutor:
    name = "ray"

    def __init__(self, address: str | None = None, compile_cuts: bool = True, num_cpus: int | None = None,
                 driver_threads: int = 64, init_kwargs: dict[str, Any] | None = None) -> None:
        try:
            import ray
        except ImportError as e:
            raise RuntimeError("--executor ray needs Ray: pip install 'kernel-harness[ray]' "
                               "(or pip install 'ray[default]>=2.9')") from e
        self.ray = ray
        self.stats = ExecutorStats()
        self.compile_cuts = compile_cuts
        env_vars = {"PYTHONPATH": os.pathsep.join(p for p in (REPO_ROOT, os.environ.get("PYTHONPATH")) if p)}
        # a cluster's nodes keep their own build caches (their HARNESS_CACHE): only a Ray this
        # process starts shares the driver's
        for k in ("TORCH_CUDA_ARCH_LIST",) if address else ("HARNESS_CACHE", "TORCH_CUDA_ARCH_LIST"):
            if os.environ.get(k):
                env_vars[k] = os.environ[k]
        from harness.executors.local import default_judges_per_device, default_timing_devices

        devices = default_timing_devices()
        self._own = not ray.is_initialized()
        if self._own:
            # a loaded machine starts Ray's agents slowly; the raylet's default wait (seconds) fails there
            os.environ.setdefault("RAY_agent_register_timeout_ms", "180000")
            kw: dict[str, Any] = {"runtime_env": {"env_vars": env_vars}, "log_to_driver": False,
                                  "include_dashboard": False, **(init_kwargs or {})}
            if address:
                kw["address"] = address
            else:  # a Ray of its own, as documented: never a cluster `ray start` left as the machine's current one
                kw["address"] = "local"
                if num_cpus is not None:
                    kw["num_cpus"] = num_cpus
                # the GPUs this process sees, as Ray resources (told: Ray's own count can miss them)
                kw.setdefault("num_gpus", sum(d.startswith("cuda") for d in devices))
            ray.init(**kw)
        self.judges_per_gpu = max(1, int(os.environ.get("KH_JUDGES_PER_DEVICE") or default_judges_per_device(devices)))
        self._weights = GpuWeights()
        # the cuts run where the work runs: once per Ray worker process (_maybe_cuts)
        # builds spread over the nodes (Ray's default packs the driver's node first)
        self._build = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, scheduling_strategy="SPREAD")(_build_task)
        self._judge = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_judge_task)
        from harness.executors.raynode import driver_identity

        self._me = driver_identity()
        self._gpus: dict[str, str] = {}  # GPU model -> the first node that judged on it
        self.nodes = self._check_nodes()
        self._driver = ThreadPoolExecutor(driver_threads, thread_name_prefix="kh-ray")
        self._abandoned = False
        self._builds: dict[int, Any] = {}  # id -> the ObjectRef of a build task in flight (abandon)
        self._builds_lock = threading.Lock()

    def _check_nodes(self) -> list[Any]:
        """Every alive node's identity, each checked against the driver (NodeMismatch names the
        first that differs); a Ray started here is checked too (its one node is this machine)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from harness.executors.raynode import check

        probe = self.ray.remote(num_cpus=0, max_retries=MAX_RETRIES)(_probe_task)
        alive = [n["NodeID"] for n in self.ray.nodes() if n.get("Alive")]
        found = self.ray.get([probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n, soft=False))
                              .remote() for n in alive], timeout=600)
        try:
            for node in found:
                check(self._me, node)
        except Exception:
            self.close()
            raise
        return found

    def submit(self, task: Task, source: str, config: EvalConfig) -> Future[Verdict]:
        self.stats.mark_submit()
        return self._driver.submit(self._unit, task, source, config)

    def judge(self, task: Task, source: str, config: EvalConfig) -> Verdict:
        return self.submit(task, source, config).result()

    def _unit(self, task: Task, source: str, config: EvalConfig) -> Verdict:
        ray = self.ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from harness.executors.raynode import check

        if self._abandoned:
            raise RuntimeError(CLOSED)
        ref = self._build.remote(task, source, config, self.compile_cuts)
        with self._builds_lock:
            self._builds[id(ref)] = ref
        try:
            res, built_on = ray.get(ref)
        except Exception:  # noqa: BLE001 - build infrastructure failed after retries: judge decides
            res, built_on = None, None
        finally:
            with self._builds_lock:
                self._builds.pop(id(ref), None)
        if self._abandoned:  # its build was cancelled (a stopped run): not judged
            raise RuntimeError(CLOSED)
        if built_on is not None:
            check(self._me, built_on)
        node = built_on.node_id if built_on is not None else None
        where = {"build_node": built_on.short() if built_on is not None else None}
        with self.stats.lock:
            if res is not None and res.builds:
                self.stats.build_compile_s.append(res.compile_s)
            outcome = getattr(res, "outcome", "not_built")
            if outcome == "built":
                self.stats.built += 1
            elif outcome == "compile_error":
                self.stats.compile_errors += 1
            else:
                self.stats.not_built += 1
        if res is not None and res.outcome == "compile_error" and res.verdict is not None:
            res.verdict.evidence.setdefault("executor", {"name": self.name, "timing_slot": False, **where})
            self.stats.mark_done()
            return res.verdict
        # a share of a GPU: several judge tasks start their workers on one GPU while one of them
        # holds it (the device lock is machine-wide for GPUs: sandbox/lane/devicelock.py); a
        # judgement whose data needs more of the GPU's memory asks for as many shares (GpuWeights)
        opts: dict[str, Any] = {"num_gpus": self.gpu_share(task, config)}
        if node:
            opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=node, soft=True)
        t0 = time.monotonic()
        try:
            v, judged_on = ray.get(self._judge.options(**opts).remote(task, source, config, self.compile_cuts))
        except ray.exceptions.RayTaskError as e:  # CandidateError / TaskError raised in the task
            cause = getattr(e, "cause", None)
            raise (cause if isinstance(cause, BaseException) else e) from None
        finally:
            with self.stats.lock:
                self.stats.busy_s += time.monotonic() - t0
                self.stats.judged += 1
            self.stats.mark_done()
        with self.stats.lock:  # a node that differs from the run refuses the verdict (raynode.py)
            check(self._me, judged_on, self._gpus if config.device.startswith("cuda") else None)
        v.evidence.setdefault("executor", {"name": self.name, "prebuild": getattr(res, "outcome", None),
                                           **where, "judge_node": judged_on.short()})
        return v

    def gpu_share(self, task: Task, config: EvalConfig) -> float:
        """The Ray GPU resource one judge task asks for: ``weight / judges_per_gpu`` (at most 1)."""
        if not config.device.startswith("cuda"):
            return 0
        return self._weights(task, config, self.judges_per_gpu) / self.judges_per_gpu

    def summary(self) -> dict[str, Any]:
        s = self.stats.summary()
        s.update(executor=self.name)
        return s

    def abandon(self) -> None:
        """The run stopped (Ctrl-C, SIGTERM): units not begun are not begun, and the build tasks in
        flight are cancelled (their Ray workers killed; a build worker dies with the process that
        started it), so ``close`` does not wait for them. Judge tasks in flight finish: their
        verdicts are stored as they come (harness/executors/local.py does the same)."""
        self._abandoned = True
        with self._builds_lock:
            refs = list(self._builds.values())
        for ref in refs:
            try:
                self.ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - a task that has just finished
                pass

    def close(self) -> None:
        if hasattr(self, "_driver"):
            self._driver.shutdown(wait=True, cancel_futures=getattr(self, "_abandoned", False))
        if self._own:
            self.ray.shutdown()

