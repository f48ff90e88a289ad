"""Task checks: a task whose reference output does not depend on its inputs and weights cannot
judge anything (issue 25, "Degenerate tasks").

Conv3d -> GroupNorm -> mean over every non-batch dim is constant up to rounding, whatever the
input and weights (each group is normalised to mean 0): on such a task a candidate with wrong
weights, or none, is ``valid``. The check ``task.degenerate`` redraws the reference's inputs AND
its weights (``get_init_inputs()`` and ``Model(...)`` under another torch seed) ``DRAWS - 1``
times and compares each draw's output with the first under the op's own tolerance (the
evaluator's rule, sandbox/check/compare.py). A task is degenerate when every redraw passes: any output
close to the reference's, wherever it came from, is then judged correct.

Where it runs: in a reference worker (the jailed worker role that runs references, never the
candidate's): ``setup`` with a seed, as a judgement's; then requests of the check's own that keep
every input and output on the worker's device (``own_call``: inputs made from the seed there and
the forward, sandbox/worker/main.py; ``keep_own`` of the first draw's output, ``check_own`` of each
redraw against it with the evaluator's comparison, sandbox/check/refcheck.py). Until session 31 it
went through a judgement's ``call``, ``fetch`` and ``check``, whose inputs and first output crossed
to the host and back (an 8 GiB input twice a draw). On a CPU one worker for all the tasks of one
call; on a CUDA device several reference workers per visible GPU (``check_lanes``), side by side,
each taking the next task from a shared queue as it becomes free. The check runs at the profile and on the device kind
the judgement will use; its draws' calls and comparisons hold the device's lock (on a GPU, not the
models' constructors, which run before: ``_Held``). The seeds are fixed, so the answer is deterministic; it is kept per
task source, device kind and profile beside the reference cache's entry
(``<cache root>/reference/<key>.checks.json``, sandbox/check/refcache.py), so each task is checked once
per machine, not per candidate.

Who runs it: ``harness eval``, ``eval-batch`` and ``run`` before judging (a degenerate task is
refused, exit 2, one line naming the check, unless ``--allow-degenerate``), and ``harness suite
lint``, which lists every degenerate task with the evidence. ``evaluate()`` itself reads the
kept answer: it refuses a task known to be degenerate unless ``EvalConfig.allow_degenerate``, and
records the answer in the verdict (``evidence.task_check``; ``evidence.allow_degenerate`` when
set). A reference that fails is not this check's business: its result says so
(``degenerate: None``, not kept) and judging reports the broken task as before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sandbox.intake.task import Task
from sandbox.intake.taskanswer import (  # noqa: F401 - the check's answer, kept: named here too
    CHECK,
    DRAWS,
    VERSION,
    DegenerateTask,
    TaskCheck,
    keep,
    lookup,
    store_path,
)

if TYPE_CHECKING:
    from sandbox.config import EvalConfig
    from sandbox.verdict import Verdict

Answered = Callable[[Task, "EvalConfig", "TaskCheck"], None]  # check_tasks' on_answer
INIT_SEED, INPUT_SEED = 0x7A5C0, 0x1F0D0  # draw k: init INIT_SEED + k, inputs INPUT_SEED + k
_KEEPING = threading.Lock()  # one writer at a time of the kept answers (check_tasks)


# -- the check in a reference worker ---------------------------------------------------------------

def _kind(device: str) -> str:
    return "cuda" if device.startswith("cuda") else "cpu"


def _probe(w: Any, task: Task, profile: str, device: str,
           held: Callable[[], AbstractContextManager[Any]] = nullcontext) -> TaskCheck:
    """The draws of one task in worker ``w`` (a reference WorkerSession): every input and output stays
    on the worker's device (``own_call``, ``keep_own``, ``check_own``). Every draw's model is built
    first (``setup`` with ``keep_as``: the constructor's CPU work and the copy of its weights), outside
    ``held``; then the draws' calls and comparisons, inside it (on a GPU: one hold of the device's
    lock, ``_Held``)."""
    base = TaskCheck(task.name, str(task.path), profile, _kind(device), None, task.meta.atol, task.meta.rtol)
    if profile != "default" and profile not in task.shapes:  # judging says so (TaskError)
        return replace(base, error=f"no shape profile {profile!r} (has {task.profiles})")
    overrides = dict(task.shapes.get(profile, {})) if profile != "default" else {}
    diffs: list[float] = []
    changed: list[float] = []
    took = {"setup": 0.0, "own_call": 0.0, "keep_own": 0.0, "check_own": 0.0}
    base = replace(base, took_s=took)

    def request(step: str, **kw: Any) -> dict[str, Any]:
        t = time.monotonic()
        rep, _ = w.request(step, **kw)
        took[step] = round(took[step] + time.monotonic() - t, 3)
        return rep

    for k in range(DRAWS):  # draw k's model as "draw<k>", beside the others (weights: small beside the data)
        rep = request("setup", task_source=task.source, task_path=str(task.path), overrides=overrides,
                      init_seed=INIT_SEED + k, compile=False, keep_as=f"draw{k}")
        if not rep.get("ok"):
            return replace(base, error=f"building Model (draw {k}): {str(rep.get('error', ''))[-1500:]}")
    with held():
        for k in range(DRAWS):
            rep = request("own_call", seed=INPUT_SEED + k, target=f"draw{k}")
            if not rep.get("ok"):
                return replace(base, error=f"the reference's call (draw {k}): {str(rep.get('error', ''))[-1500:]}")
            if k == 0:  # kept on the worker's device: no copy through the host (sandbox/check/refcheck.py)
                rep = request("keep_own")
                if not rep.get("ok"):
                    return replace(base, error=f"keeping the first draw's output: {rep.get('error')}")
                continue
            rep = request("check_own", atol=task.meta.atol, rtol=task.meta.rtol)
            if not rep.get("ok") or rep.get("load_error"):
                return replace(base, error=f"comparing draw {k}: {rep.get('error', rep.get('load_error'))}")
            if not rep.get("types_ok") or not rep.get("passed"):  # another shape or dtype, or beyond tolerance
                diffs.append(float(rep.get("max_abs_err") or 0.0) if rep.get("types_ok") else float("inf"))
                changed.append(float(rep.get("mismatch_fraction") or 0.0) if rep.get("types_ok") else 1.0)
            else:
                diffs.append(float(rep.get("max_abs_err") or 0.0))
                changed.append(0.0)
    return replace(base, degenerate=all(c == 0.0 for c in changed), max_abs_diff=max(diffs, default=0.0),
                   changed=min(changed, default=0.0))


def _gpu_bytes(task: Task, config: EvalConfig) -> int | None:
    """The memory the check of ``task`` may hold on its GPU (``check_gpu_bytes``: one reference
    worker's draw, not a judgement's two workers and arena), None off a GPU or unknown."""
    from sandbox.intake.datasize import check_gpu_bytes

    try:
        return check_gpu_bytes(task, config, DRAWS)
    except Exception:  # noqa: BLE001 - a size that cannot be estimated: the check reserves the least
        return None


class _Held:
    """On a GPU, the device's lock around a task's draws' calls and comparisons (``_probe``'s
    ``held``), with the worker's GPU warm-up at its first hold; the draws' models are built before
    it. Until session 32 the lock covered the task's whole check: 63 KernelBench tasks held the
    H200 for 91 s of model constructors (session 32, call 1). A hold a draw, with the setups
    between them, made the check wait for the judgements in line three times a task: slower by
    more than it gave (call 2)."""

    def __init__(self, w: Any, device: str, warm: bool, took: dict[str, float]) -> None:
        from sandbox.lane import devicelock

        self.w, self.warm, self.took = w, warm, took
        self.lock = devicelock.device_lock(device)
        self.rank = devicelock.TASK_CHECK  # first in line: the task's judgements wait for its answer

    @contextmanager
    def __call__(self) -> Iterator[None]:
        from sandbox.worker.session import WorkerDied

        t = time.monotonic()
        self.lock.acquire(self.rank)
        try:
            self.took["lock_wait"] = round(self.took.get("lock_wait", 0.0) + time.monotonic() - t, 3)
            if not self.warm:  # the warm-up's kernels, now that the device is held (as a judgement does)
                t = time.monotonic()
                rep, _ = self.w.request("warm_device")
                if not rep.get("ok"):
                    raise WorkerDied(f"GPU warm-up: {str(rep.get('error', ''))[:500]}")
                self.warm = True
                self.took["warm"] = round(time.monotonic() - t, 3)
            yield
        finally:
            self.lock.release()


def _run(items: Iterable[tuple[Task, EvalConfig]], cfg: EvalConfig, count: int,
         on_answer: Answered | None = None) -> list[tuple[tuple[Task, EvalConfig], TaskCheck]]:
    """Check ``items`` (all on one device, sandbox and cache root, as ``cfg``; at most ``count`` of
    them: a shared queue's, ``_run_split``) in one reference worker, started at the first item; a new
    worker after one that died. ``on_answer(task, config, answer)`` as each task is checked. (item,
    answer) pairs."""
    from sandbox.isolation import SandboxUnavailable, get_launcher
    from sandbox.lane.devicelock import device_lock
    from sandbox.lane.gpumem import GpuMemory
    from sandbox.worker.judgeenv import worker_limits
    from sandbox.worker.session import ProtocolViolation, WorkerDied, WorkerSession

    launcher = get_launcher(cfg.sandbox, unsafe=cfg.unsafe_no_isolation)
    check = getattr(launcher, "check", None)
    if callable(check):
        check()  # IsolationUnavailable: a setup error, before any worker starts
    limits, _ = worker_limits(cfg)
    limits = replace(limits, wall_seconds=cfg.timeout_s * count + 60.0)
    out: list[tuple[tuple[Task, EvalConfig], TaskCheck]] = []
    w: Any = None
    warm = False  # the current worker's GPU warm-up done
    try:
        for task, c in items:
            spent: dict[str, float] = {}  # the worker's own start and warm-up, on the task that waited for them
            if w is None:
                try:
                    t = time.monotonic()
                    w = WorkerSession("reference", launcher, c.device, None, time.monotonic() + c.timeout_s, limits)
                    w.connect()
                    warm = not c.device.startswith("cuda")
                    spent["start"] = round(time.monotonic() - t, 3)
                except WorkerDied as e:  # nothing of the task ran yet: this machine's or the jail's problem
                    raise SandboxUnavailable(f"the task check's reference worker did not start: {e} "
                                             "(`harness doctor` checks the jail)") from e
            memory = GpuMemory()  # this task's share of the GPU: the check runs beside judgements
            try:
                waited = memory.reserve(c.device, _gpu_bytes(task, c))
                if waited:
                    spent["memory_wait"] = round(waited, 3)
                w.deadline = time.monotonic() + c.timeout_s
                if c.device.startswith("cuda"):  # the lock around the draws' calls, not their setups (_Held)
                    held = _Held(w, c.device, warm, spent)
                    try:
                        res = _probe(w, task, c.profile, c.device, held)
                    finally:
                        warm = held.warm
                    rep, _ = w.request("trim")  # its memory back before its reservation goes
                    if not rep.get("ok"):
                        raise WorkerDied(f"giving the task's memory back: {str(rep.get('error', ''))[:500]}")
                else:  # on a CPU the lock keeps the constructors' work away from another judgement's host timers
                    with device_lock(c.device):
                        res = _probe(w, task, c.profile, c.device)
                out.append(((task, c), replace(res, took_s={**spent, **(res.took_s or {})})))
            except (WorkerDied, ProtocolViolation) as e:
                out.append(((task, c), TaskCheck(task.name, str(task.path), c.profile, _kind(c.device), None,
                                                 task.meta.atol, task.meta.rtol,
                                                 error=f"the reference worker died: {e}"[:1500])))
                w.close()
                w = None
            finally:
                memory.release()
            if on_answer is not None:
                on_answer(task, c, out[-1][1])
    finally:
        if w is not None:
            w.close()
    return out


def visible_gpus(device: str) -> list[str]:
    """The devices a check on ``device`` is spread over: every GPU this process sees ("cuda:0",
    "cuda:1", ...: numbered through our CUDA_VISIBLE_DEVICES, as a worker's "cuda:N" is) when
    ``device`` is a CUDA device and more than one is visible, else ``device`` alone.
    ``torch.cuda.device_count()`` counts them without creating a CUDA context here (as
    ``resolve_device`` and the local executor already do in this process)."""
    if not device.startswith("cuda"):
        return [device]
    try:
        import torch

        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - no count: the one device asked for
        n = 0
    return [f"cuda:{i}" for i in range(n)] if n > 1 else [device]


CHECKERS_PER_GPU = 3  # reference workers checking side by side on each GPU (KH_CHECKERS_PER_GPU)


def check_lanes(device: str) -> list[str]:
    """The devices a check on ``device`` is dealt over, one reference worker each: every visible
    GPU (``visible_gpus``) ``KH_CHECKERS_PER_GPU`` times (default ``CHECKERS_PER_GPU``), or a CPU
    once. Several workers share a GPU's lock: a task's draws hold it a fraction of a second, while its
    models' constructors (CPU work, outside the lock) and its wait for a judgement's hold took 3.3 s
    a task one after another (session 32, call 1: 208 s for 63 KernelBench tasks on one H200)."""
    gpus = visible_gpus(device)
    if not device.startswith("cuda"):
        return gpus
    import os

    try:
        k = max(1, int(os.environ.get("KH_CHECKERS_PER_GPU") or CHECKERS_PER_GPU))
    except ValueError:
        k = CHECKERS_PER_GPU
    return gpus * k


def _run_split(group: list[tuple[Task, EvalConfig]],
               on_answer: Answered | None = None) -> list[tuple[tuple[Task, EvalConfig], TaskCheck]]:
    """``group`` (one device, sandbox and cache root) checked as ``_run`` does, spread over
    ``check_lanes`` on a CUDA device: several reference workers per visible GPU, side by side in
    threads, sharing each GPU's lock (2.4 s a KernelBench task on an H200, one after another, held a
    batch's compile workers back 150 s). Each worker takes the next task not yet taken, in the
    group's order, as it becomes free: the tasks' costs differ (a task's memory waits most), and
    parts dealt ahead left the check as slow as its slowest part (session 32, call 3: three workers,
    134 s for 63 tasks against 58 s of steps each on average). (item, answer) pairs, the items as
    given to the worker that checked them (moved to its GPU)."""
    lanes = check_lanes(group[0][1].device)
    n = min(len(lanes), len(group))
    if n <= 1:
        return _run(group, group[0][1], len(group), on_answer)
    import queue
    from concurrent.futures import ThreadPoolExecutor

    todo: queue.SimpleQueue[tuple[Task, EvalConfig]] = queue.SimpleQueue()
    for item in group:
        todo.put(item)

    def pulled(device: str) -> Iterator[tuple[Task, EvalConfig]]:
        while True:
            try:
                task, c = todo.get_nowait()
            except queue.Empty:
                return
            yield task, (replace(c, device=device) if c.device != device else c)

    cfgs = [replace(group[0][1], device=d) for d in lanes[:n]]
    with ThreadPoolExecutor(n, thread_name_prefix="kh-taskcheck") as pool:
        futs = [pool.submit(_run, pulled(c.device), c, len(group), on_answer) for c in cfgs]
        results = [f.result() for f in futs]  # the first worker that raised (SandboxUnavailable) raises
    return [pair for res in results for pair in res]


def check_tasks(items: Sequence[tuple[Task, EvalConfig]], on_answer: Answered | None = None) -> list[TaskCheck]:
    """The answer for each (task, the config it will be judged with), in order: kept answers where
    there are, the rest computed (one reference worker per device, sandbox and cache root, or one
    per GPU where a CUDA device's group is spread over several: ``_run_split``; a task given many
    times, as in a batch, once) and kept. ``on_answer(task, config, answer)`` is called once per
    task as its answer is known (kept ones first; computed ones from the checking threads), so a
    batch can judge a task that passed while the others are checked. Raises SandboxUnavailable
    where no worker can be started."""
    from sandbox.worker.judgeenv import cache_root

    answers: dict[tuple[str, str, str, str], TaskCheck] = {}
    todo: dict[tuple[str, str, str, bool], list[tuple[Task, EvalConfig]]] = {}
    keys = []
    for task, cfg in items:
        root = cache_root(cfg)
        key = (task.sha256, cfg.profile, _kind(cfg.device), root)
        if key in keys:
            keys.append(key)
            continue
        keys.append(key)
        kept = lookup(root, task, cfg.profile, cfg.device)
        if kept is not None:
            answers[key] = kept
            if on_answer is not None:
                on_answer(task, cfg, kept)
        else:
            todo.setdefault((cfg.device, cfg.sandbox, root, cfg.unsafe_no_isolation), []).append((task, cfg))
    def answered(task: Task, cfg: EvalConfig, res: TaskCheck) -> None:
        """Kept as each answer is known, from the checking threads (one at a time: a task's file holds
        its profiles): a batch stopped before the check ended keeps the tasks it checked. Until session
        32 the answers were kept when the whole check ended; a batch stopped at 280 s, before the end of
        a 63-task check on one H200, kept none, and the next batch checked every task again (call 2)."""
        with _KEEPING:
            keep(cache_root(cfg), task, cfg.device, res)
        if on_answer is not None:
            on_answer(task, cfg, res)

    for (device, _, root, _), group in todo.items():
        for (task, cfg), res in _run_split(group, answered):
            answers[(task.sha256, cfg.profile, _kind(device), root)] = res
    return [answers[k] for k in keys]


def timing_line(results: Sequence[TaskCheck], wall_s: float) -> str:
    """One line of where the check's time went, for the answers computed now ("" when every answer
    was kept): the wall time, and each step's seconds summed over the tasks (side by side over
    several GPUs, so the sum may pass the wall time)."""
    now = {(r.path, r.profile): r for r in results if not r.cached and r.took_s}
    if not now:
        return ""
    steps: dict[str, float] = {}
    for r in now.values():
        for k, v in (r.took_s or {}).items():
            steps[k] = steps.get(k, 0.0) + v
    order = ["memory_wait", "lock_wait", "start", "warm", "setup", "own_call", "keep_own", "check_own"]
    parts = ", ".join(f"{k} {steps[k]:.1f}" for k in order if k in steps)
    return f"task check: {len(now)} task(s) checked in {wall_s:.1f} s (seconds per step, summed: {parts})"


def refuse(results: Sequence[TaskCheck], allow: bool = False) -> None:
    """DegenerateTask for the first degenerate answer, unless ``allow``."""
    if allow:
        return
    for r in results:
        if r.degenerate:
            raise DegenerateTask(r)


# -- inside evaluate() -----------------------------------------------------------------------------

def known(task: Task, config: EvalConfig) -> TaskCheck | None:
    """The kept answer for this judgement (no worker is started); DegenerateTask when it is
    degenerate and the config does not allow it."""
    from sandbox.worker.judgeenv import cache_root

    res = lookup(cache_root(config), task, config.profile, config.device)
    if res is not None:
        refuse([res], allow=config.allow_degenerate)
    return res


def record(v: Verdict, result: TaskCheck | None, config: EvalConfig) -> None:
    """The check's answer in the verdict (absent: not checked on this machine) and the flag."""
    if result is not None:
        v.evidence["task_check"] = {"check": CHECK, "degenerate": result.degenerate, "profile": result.profile,
                                    "draws": result.draws, "max_abs_diff": result.max_abs_diff,
                                    "changed": result.changed}
    if config.allow_degenerate:
        v.evidence["allow_degenerate"] = True
