"""A whole run: resolve method and ops, create (or resume) the run record, run the ops
(in parallel with ``jobs`` > 1), print the summary. ``run(RunConfig(...))`` is what
``harness run`` calls; tests call it directly."""

from __future__ import annotations

import dataclasses
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from harness.astlock import serialise_ast_parse
from harness.executors.base import abandon
from harness.methods.base import Budget
from harness.methods.registry import get_method
from harness.runner.op import JudgeFn, OpResult, OpRunner, OpSettings
from harness.runner.progress import Progress, op_errors, summary_table
from harness.runner.stop import SIGNAL, RunInterrupted, RunStop, signal_reason
from harness.runner.tasks import resolve_tasks
from harness.store import Results, RunSpec, fingerprint, new_run_id, runlock
from harness.suite.seeds import seeded_ops, seeds_dir
from sandbox.contract import precompiled_headers


@dataclass
class RunConfig:
    method: str
    suite: str | None = None
    ops: list[str] | None = None
    llm: str = "offline"
    llm_config: Any = None  # harness.llm.config.LLMConfig; None = defaults
    budget: Budget | None = None  # None: the method's default_budget evaluations
    budget_limits: dict[str, Any] = field(default_factory=dict)  # llm_calls, tokens, wall_s
    seed: int = 0
    device: str = "cpu"
    results: Path = Path("results")
    run_id: str | None = None
    sandbox: str = "process"
    jobs: int = 1
    method_options: dict[str, Any] = field(default_factory=dict)
    eval_overrides: dict[str, Any] = field(default_factory=dict)  # EvalConfig fields
    progress: bool = True
    # additive (issue 8): how candidates are judged; harness/executors/, docs/performance.md
    executor: str = "serial"  # "serial" | "local" | "ray"
    ray_address: str | None = None  # --executor ray: cluster address (None: a local Ray)
    compile_workers: int | None = None  # --executor local: build workers (None: cpu_count-1)
    # issue 7: run the method itself as an isolated program that reaches the harness only through
    # the evaluation endpoint and the LLM gateway (docs/method-protocol.md); None = in-process
    isolate: str | None = None  # None | "process" | "docker"
    # issue 15: the rule set judging every candidate of the run (stored with it; its leaderboard track)
    rules: str = "strict"  # "strict" | "partial" (sandbox/rules/__init__.py RULE_SETS)
    # issue 29: independent judging sessions of each op's final kernel (the published interval is
    # over them); None: FINAL_SESSIONS_GPU on a GPU, 1 on a CPU (host timers: test numbers only)
    final_sessions: int | None = None
    # issue 30: seed kernels ("suite" = the shipped ones, a folder, or None = none) for methods
    # that start from one; an innovation archive file that persists across runs (ai-cuda-engineer)
    seed_kernels: str | None = None
    archive: str | None = None
    # issue 26: module-level globals of the task files set for the run (--set NAME=VALUE; recorded in
    # the run's config and in every verdict; harness/tasksize.py)
    task_globals: dict[str, Any] = field(default_factory=dict)
    command: list[str] | None = None  # the command line that started it (`runs show` prints the resume command)


FINAL_SESSIONS_GPU = 3


def final_sessions_for(device: str, requested: int | None) -> int:
    """The number of final judging sessions of a run: the one asked for, else 3 on a GPU and 1
    on a CPU (where a final judgement costs a minute of host timing and numbers are tests only)."""
    if requested is not None:
        if requested < 1:
            raise ValueError(f"final_sessions={requested}: use 1 or more (--final-sessions)")
        return requested
    return FINAL_SESSIONS_GPU if device.startswith("cuda") else 1


@dataclass
class RunReport:
    run_id: str
    results_path: Path
    ops: list[OpResult]
    stopped: str | None = None  # why the run stopped before its ops were done (an LLM outage)

    @property
    def failed(self) -> list[OpResult]:
        return [r for r in self.ops if r.status == "failed"]

    def errors(self) -> str:
        """Each failed or interrupted op's full error (the table shows only its first words)."""
        return op_errors(self.ops)

    def table(self) -> str:
        return summary_table(self.ops)


def llm_for_seed(spec: str, seed: int) -> str:
    """``offline`` follows the run seed, so offline runs are reproducible from ``--seed``."""
    return f"offline:{seed}" if spec.strip() == "offline" else spec


def run(
    cfg: RunConfig, *, judge: JudgeFn | None = None, stream: TextIO | None = None, model: Any = None
) -> RunReport:
    """Run (or resume) ``cfg``; ``judge`` replaces the sandboxed evaluator (tests only),
    ``model`` replaces the LLM built from ``cfg.llm`` (tests only; it must record itself)."""
    stream = stream or sys.stderr
    method = inner = _make_method(cfg)
    if cfg.isolate:
        from harness.endpoints.launcher import IsolatedMethod, ProgramSettings

        method = IsolatedMethod(
            cfg.method, ProgramSettings(sandbox=cfg.isolate, hide=[str(Path(cfg.results).resolve())])
        )
    method_name = getattr(method, "name", cfg.method) or cfg.method
    tasks = run_tasks(cfg)
    budget = cfg.budget or Budget(evaluations=int(getattr(method, "default_budget", 45) or 45))
    if cfg.budget_limits:
        budget = dataclasses.replace(budget, **cfg.budget_limits)
    n_final = final_sessions_for(cfg.device, cfg.final_sessions)
    seeds = seeds_dir(cfg.seed_kernels)
    results = Results.open(cfg.results)
    env = fingerprint.environment(cfg.device)
    run_id = cfg.run_id or new_run_id(method_name)
    with runlock.hold(results.store.dir, run_id):  # one process at a time runs a run (store/runlock.py)
        return _run_held(cfg, method, inner, method_name, tasks, budget, n_final, seeds, results, env, run_id,
                         judge, stream, model)


def _run_held(cfg: RunConfig, method: Any, inner: Any, method_name: str, tasks: list[Any], budget: Budget,
              n_final: int, seeds: Any, results: Results, env: Any, run_id: str, judge: JudgeFn | None,
              stream: TextIO, model: Any) -> RunReport:
    """``run`` once this process holds the run."""
    from harness.llm.factory import spec_is_offline

    executor = None  # made before the run is stored: one that cannot start leaves no run behind
    if judge is None and cfg.executor != "serial":
        from harness.executors import make_executor

        executor = make_executor(cfg.executor, ray_address=cfg.ray_address,
                                 compile_workers=cfg.compile_workers,
                                 compile_cuts=cfg.device.startswith("cuda"))
        judge = executor.judge
    spec = RunSpec(
        method=method_name,
        llm=cfg.llm,
        llm_offline=spec_is_offline(cfg.llm, results.store),  # a replay of an offline run stays offline
        budget=dataclasses.asdict(budget),
        seed=cfg.seed,
        device=cfg.device,
        variant=str(getattr(method, "variant", "") or "") or None,
        suite=cfg.suite if cfg.suite else "ops:" + ",".join(cfg.ops or []),
        config={
            "method_options": cfg.method_options,
            "sandbox": cfg.sandbox,
            "jobs": cfg.jobs,
            **({"executor": executor_record(cfg, executor)} if executor is not None else {}),
            "eval_overrides": cfg.eval_overrides,
            "llm_effective": llm_for_seed(cfg.llm, cfg.seed),
            "ops": [t.name for t in tasks],
            "final_sessions": n_final,
            **({"task_globals": cfg.task_globals} if cfg.task_globals else {}),
            **({"command": cfg.command} if cfg.command else {}),
            **recorded_settings(cfg, inner, budget, tasks, seeds, runs=method),
        },
        environment=env,
        run_id=run_id,
        rules=cfg.rules,
    )
    try:
        info = results.create_run(spec)
    except BaseException:
        if executor is not None:
            executor.close()
        raise
    if model is None:
        from harness.llm.factory import make_model

        kw: dict[str, Any] = {"store": results.store, "run_id": info.run_id, "device": cfg.device}
        if cfg.llm_config is not None:
            kw["config"] = cfg.llm_config
        model = make_model(llm_for_seed(cfg.llm, cfg.seed), **kw)
    settings = OpSettings(
        run_id=info.run_id,
        device=cfg.device,
        budget=budget,
        seed=cfg.seed,
        sandbox=cfg.sandbox,
        eval_overrides=cfg.eval_overrides,
        rules=info.rules,
        environment=env,
        prices=dict(getattr(cfg.llm_config, "prices", None) or {}),
        final_sessions=n_final,
        seed_kernels=seeds,
    )
    planned = getattr(method, "planned_trials", None)  # optional: methods that stop early
    per_op = min(budget.evaluations, int(planned(budget))) if planned else budget.evaluations
    progress = Progress([t.name for t in tasks], per_op, stream=stream, enabled=cfg.progress, jobs=cfg.jobs)
    stop = RunStop()
    runner = OpRunner(results, method, model, settings, judge=judge, progress=progress, stop=stop)
    if cfg.progress:
        offline = " (offline model: a dry run, not a model result)" if info.llm_offline else ""
        stream.write(
            f"run {info.run_id}: {method_name} on {len(tasks)} op(s), budget "
            f"{budget.evaluations}/op, llm {cfg.llm}{offline}, device {cfg.device}, "
            f"results {results.path}\n"
        )
    try:
        op_results = []
        for wave in op_waves(method, tasks):  # e.g. an fused op's parts before the fused op
            if cfg.jobs > 1 and len(wave) > 1:
                serialise_ast_parse()
                pool = ThreadPoolExecutor(max_workers=cfg.jobs, thread_name_prefix="op")
                try:
                    op_results += list(pool.map(runner.run, wave))
                except KeyboardInterrupt as e:  # ops in flight stop at their next LLM call or evaluation
                    stop.halt(signal_reason(e)[0], SIGNAL)
                    raise
                finally:
                    pool.shutdown(wait=not stop.stopped, cancel_futures=True)
            else:
                op_results += [runner.run(t) for t in wave]
        order = {t.name: i for i, t in enumerate(tasks)}
        op_results.sort(key=lambda r: order.get(r.op, len(order)))
    except KeyboardInterrupt as e:  # SIGINT, or SIGTERM (harness/runner/stop.py): resumable
        reason, code = signal_reason(e)
        stop.halt(reason, SIGNAL)
        precompiled_headers.abandon()  # a precompiled header being built is given up: close() below waits for builds
        if executor is not None:
            abandon(executor)  # and the executor's builds in flight (harness/executors/base.py)
        results.finish_run(info.run_id, error=reason, status="interrupted")
        raise RunInterrupted(info.run_id, reason, code) from e
    except BaseException as e:
        results.finish_run(info.run_id, error=f"interrupted: {type(e).__name__}: {e}")
        raise
    finally:
        if executor is not None:
            executor.close()
        precompiled_headers.reset()
    failed = [r for r in op_results if r.status == "failed"]
    if stop.stopped:  # an LLM outage: what was found is final-judged; the rest waits for a resume
        results.finish_run(info.run_id, error=stop.reason, status="interrupted")
    else:
        results.finish_run(info.run_id, error=f"{len(failed)} op(s) failed" if failed else None)
    return RunReport(run_id=info.run_id, results_path=results.path, ops=op_results, stopped=stop.reason)


def executor_record(cfg: RunConfig, executor: Any) -> dict[str, Any]:
    """What the run records of its executor: the name, the Ray address and the cluster's nodes."""
    out: dict[str, Any] = {"name": cfg.executor}
    if cfg.executor == "ray":
        out["ray_address"] = cfg.ray_address
        out["nodes"] = [{"node": n.short(), "gpu": n.gpu, "torch": n.torch, "judge_code": n.judge_code[:16]}
                        for n in getattr(executor, "nodes", [])]
    elif cfg.compile_workers:
        out["compile_workers"] = cfg.compile_workers
    return out


def run_tasks(cfg: RunConfig) -> list[Any]:
    """The run's tasks, with its ``--set`` globals applied where a task file assigns them."""
    from harness.tasksize import apply_known

    return [apply_known(t, cfg.task_globals) for t in resolve_tasks(cfg.suite, cfg.ops)]


# -- issue 30: what the run records about its method, and the order of its ops --------------
def _make_method(cfg: RunConfig) -> Any:
    """The method, with ``--archive`` given to a method that keeps an innovation archive."""
    options = dict(cfg.method_options)
    if cfg.archive:
        options.setdefault("archive_path", cfg.archive)
    try:
        return get_method(cfg.method, **options)
    except TypeError as e:
        if cfg.archive and "archive_path" in str(e):
            raise ValueError(f"--archive {cfg.archive}: method {cfg.method!r} keeps no innovation "
                             "archive (ai-cuda-engineer does); drop --archive") from e
        raise ValueError(f"--method {cfg.method}: bad option(s) {sorted(cfg.method_options)}: {e}") from e


def recorded_settings(cfg: RunConfig, method: Any, budget: Budget, tasks: list[Any],
                      seeds: Path | None, runs: Any = None) -> dict[str, Any]:
    """``method_settings`` (the method's resolved arguments), ``llm_settings`` (sampling),
    ``prompt_hashes`` (each prompt template with its includes) and the seed kernels used."""
    from harness.methods.settings import (
        llm_settings,
        method_settings,
        method_templates,
        prompt_hashes,
    )

    ms = method_settings(method, cfg.method_options, budget)
    language = "cuda" if cfg.device.startswith("cuda") else "cpp"
    runs = method if runs is None else runs  # what actually runs (an isolated program gets no seed)
    uses_seeds = bool(getattr(runs, "uses_seed_kernel", False)) and seeds is not None
    names = {t.name for t in tasks}
    return {
        "method_settings": ms,
        "llm_settings": llm_settings(cfg.llm_config, ms, cfg.llm),
        "prompt_hashes": prompt_hashes(method_templates(method)),
        "seed_kernels": {
            "dir": str(seeds) if seeds is not None else None,
            "used": uses_seeds,
            "ops": sorted(names & set(seeded_ops(language, seeds))) if uses_seeds else [],
        },
    }


def op_waves(method: Any, tasks: list[Any]) -> list[list[Any]]:
    """Groups of ops run one after another (``method.op_waves`` when it has one: AI CUDA
    Engineer runs a fused op's parts first); one group otherwise."""
    fn = getattr(method, "op_waves", None)
    if not callable(fn):
        return [list(tasks)]
    from harness.suite.seeds import parts_of

    by_name = {t.name: t for t in tasks}
    parts = {t.name: parts_of(t.name) for t in tasks}
    waves = [[by_name[n] for n in wave if n in by_name] for wave in fn(list(by_name), parts)]
    seen = {t.name for w in waves for t in w}
    rest = [t for t in tasks if t.name not in seen]
    return [w for w in (*waves, rest) if w]
