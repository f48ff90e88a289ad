"""Judging a batch of (reference, candidate) pairs through an executor, resumably.

    report = run_batch(pairs, BatchOptions(out=Path("out"), device="cpu", mode="final"))

Every pair gets the ``EvalConfig`` that ``harness eval`` would build for it (the judging
policy, ``harness.policy.eval_config``), so verdicts are those of one-at-a-time evaluation. All
pairs are submitted at once to the executor (``local``: compile workers build ahead of one
timing lane per device, and while ``before_judging``, eval-batch's task check, runs; ``ray``;
``serial``); rows are written in the calling thread as verdicts arrive, so the output files and
the store have one writer.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from harness.batch.inputs import Pair
from harness.batch.output import (
    HARNESS_ERROR,
    INPUT_ERROR,
    BatchOutput,
    base_row,
    fill_verdict,
    row_key,
    short,
)
from harness.executors.base import abandon
from harness.statusline import StatusLines

if TYPE_CHECKING:
    from sandbox.contract import EvalConfig, Task


@dataclass
class BatchOptions:
    out: Path
    device: str = "cpu"
    mode: str = "final"
    sandbox: str = "process"
    seed: int | None = None
    profile: str | None = None
    timeout: float = 600.0
    allow_torch_ops: bool = False
    max_timing_s: float | None = None
    rules: str = "strict"  # rule set (sandbox/rules/__init__.py RULE_SETS): in every config, row key and the store run
    allow_degenerate: bool = False  # judge tasks the check task.degenerate refuses (recorded in each verdict)
    executor: str = "local"  # local | ray | serial
    jobs: int | None = None  # local: compile workers (None: CPUs - 1)
    ray_address: str | None = None
    store: Path | None = None
    label: str = "batch"
    progress: bool = True
    task_globals: dict[str, Any] = field(default_factory=dict)  # --set NAME=VALUE (harness/tasksize.py)


@dataclass
class Prepared:
    pair: Pair
    mode: str
    device: str
    source: str | None = None
    task: Task | None = None
    config: EvalConfig | None = None
    row: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # unusable before judging: an input_error row


@dataclass
class BatchReport:
    rows: list[dict[str, Any]]  # one per pair of the batch, in input order
    judged: int  # judged (or found unusable) in this invocation
    skipped: int  # judged by an earlier invocation
    out: Path
    run_id: str | None = None  # the store's run, with --store
    executor: dict[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> Counter:
        return Counter(r["status"] for r in self.rows)

    @property
    def unjudged(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["status"] in (INPUT_ERROR, HARNESS_ERROR)]

    @property
    def exit_code(self) -> int:
        return 1 if self.unjudged else 0


class BatchProgress(StatusLines):
    """One line per kernel on stderr (rewritten in place on a terminal): counts and ETA."""

    def __init__(
        self, total: int, skipped: int, stream: TextIO | None = None, enabled: bool = True
    ):
        self.total, self.done, self.judged = total, skipped, 0
        self.counts: Counter = Counter()
        super().__init__(stream, enabled)
        self.t0 = time.monotonic()
        if skipped:
            self._emit(
                f"[{self.done}/{total}] {skipped} judged earlier (resumed), skipped", final=True
            )

    def kernel(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.judged += 1
        self.counts[row["status"]] += 1
        per = (time.monotonic() - self.t0) / self.judged
        secs = int(per * (self.total - self.done))
        eta = f"{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}"
        counts = ", ".join(f"{k} {n}" for k, n in sorted(self.counts.items()))
        self._emit(
            f"[{self.done}/{self.total}] {counts} | ETA {eta} | {row['id']}: {row['status']}",
            final=self.done == self.total,
        )



def _prepare(pairs: list[Pair], opts: BatchOptions) -> list[Prepared]:
    """Read every candidate and reference once; build its config, row and key."""
    from harness.policy import default_profile, eval_config
    from harness.store import sha256_text
    from harness.suite import TaskError, load_task
    from harness.tasksize import apply_known

    tasks: dict[Path, Any] = {}
    out = []
    for pair in pairs:
        p = Prepared(pair, pair.mode or opts.mode, pair.device or opts.device)
        ref_sha = cand_sha = ""
        profile = opts.profile or ""
        if pair.error:
            p.error = pair.error
        elif pair.reference is not None:
            rp = pair.reference.resolve()
            if rp not in tasks:
                try:
                    tasks[rp] = apply_known(load_task(pair.reference), opts.task_globals)
                except TaskError as e:
                    tasks[rp] = e
            if isinstance(tasks[rp], Exception):
                p.error = str(tasks[rp])
            else:
                p.task = tasks[rp]
                ref_sha = p.task.sha256
                profile = opts.profile or default_profile(p.device, p.task)
        try:
            p.source = pair.candidate.read_text()
            cand_sha = sha256_text(p.source)
        except FileNotFoundError:
            p.error = p.error or f"{pair.candidate}: no such candidate file"
        except (OSError, UnicodeDecodeError) as e:
            p.error = p.error or f"{pair.candidate}: cannot read the candidate: {e}"
        if p.error is None:
            p.config = eval_config(
                p.mode,
                p.device,
                task=p.task,
                sandbox=opts.sandbox,
                rules=opts.rules,
                seed=opts.seed,
                profile=opts.profile,
                timeout_s=opts.timeout,
                allow_torch_ops=opts.allow_torch_ops,
                max_timing_s=opts.max_timing_s,
                candidate_name=pair.candidate.name,
                allow_degenerate=opts.allow_degenerate or None,
            )
        key = row_key(pair.id, cand_sha, ref_sha, p.mode, p.device, profile, opts.rules)
        p.row = base_row(
            pair.id,
            str(pair.reference or ""),
            str(pair.candidate),
            mode=p.mode,
            device=p.device,
            profile=profile,
            cand_sha=cand_sha,
            ref_sha=ref_sha,
            key=key,
        )
        out.append(p)
    return out


def _executor(opts: BatchOptions, preps: list[Prepared], hold_judging: bool = False) -> Any:
    cuda = any(p.device.startswith("cuda") for p in preps)
    if opts.executor == "local":
        from harness.executors.local import LocalExecutor, default_timing_devices

        return LocalExecutor(
            compile_workers=opts.jobs,
            compile_cuts=cuda,
            timing_devices=default_timing_devices() if cuda else ["cpu"],
            hold_judging=hold_judging,
        )
    from harness.executors import make_executor

    return make_executor(opts.executor, ray_address=opts.ray_address, compile_cuts=cuda)


def _start(
    opts: BatchOptions,
    preps: list[Prepared],
    judge: list[Prepared],
    before_judging: Callable[[], Any] | None,
) -> tuple[Any, dict[Future, Prepared]]:
    """(the executor, its futures) with every unit of ``judge`` submitted; (None, {}) when there
    is none. ``before_judging`` (eval-batch: the task check) returns first: the local executor
    builds meanwhile but, made with ``hold_judging``, judges nothing until it did; the ray and
    serial executors start after it. Where it raises (a refusal's SystemExit, anything) the
    executor is abandoned and closed and the error raised: nothing was judged."""
    hold = before_judging is not None and opts.executor == "local" and bool(judge)
    if before_judging is not None and not hold:
        before_judging()
    if not judge:
        return None, {}
    ex = _executor(opts, preps, hold_judging=hold)
    try:
        futs = {ex.submit(p.task, p.source, p.config): p for p in judge}
        if hold:
            assert before_judging is not None
            before_judging()
            ex.open_judging()
    except BaseException:
        abandon(ex)  # the builds in flight given up: close waits for none
        ex.close()
        raise
    return ex, futs


def _outcome(p: Prepared, fut: Future) -> tuple[Any, str | None, str | None]:
    """(verdict, input error, harness error) of a finished judgement."""
    from harness.suite import TaskError
    from sandbox.contract import CandidateError

    try:
        return fut.result(), None, None
    except (CandidateError, TaskError) as e:
        return None, str(e), None
    except Exception as e:  # noqa: BLE001 - the executor failed, not the kernel: retried later
        return None, None, f"{type(e).__name__}: {e}"


def run_batch(
    pairs: list[Pair],
    opts: BatchOptions,
    *,
    stream: TextIO | None = None,
    before_judging: Callable[[], Any] | None = None,
) -> BatchReport:
    """Judge ``pairs`` into ``opts.out``. ``before_judging`` (eval-batch: the task check) runs
    while the local executor's compile workers build; judging starts once it returned, and where
    it raises nothing is judged and nothing is written (the folder and the store are opened after
    it)."""
    preps = _prepare(pairs, opts)
    out = BatchOutput(opts.out)
    keys = {p.pair.id: p.row["key"] for p in preps}
    earlier = out.kept(keys)  # a look only: the folder is written once before_judging returned
    todo = [p for p in preps if p.row["key"] not in earlier]
    ex, futs = _start(opts, preps, [p for p in todo if p.error is None], before_judging)
    summary: dict[str, Any] = {}
    error = None
    recorder = None
    try:
        done = out.open(keys)
        progress = BatchProgress(len(preps), len(preps) - len(todo), stream, opts.progress)
        if opts.store is not None:
            from harness.batch.record import StoreRecorder

            cfg = {k: v for k, v in asdict(opts).items() if k not in ("out", "store", "progress")}
            recorder = StoreRecorder(
                opts.store,
                out.dir,
                label=opts.label,
                device=opts.device,
                rules=opts.rules,
                config={**cfg, "out": str(opts.out)},
                n_kernels=len(preps),
            )
        _collect(preps, todo, futs, done, out, progress, recorder)
        summary = ex.summary() if ex is not None and hasattr(ex, "summary") else {}
    except BaseException as e:
        error = f"interrupted: {type(e).__name__}"
        if isinstance(e, KeyboardInterrupt) and ex is not None:
            # Ctrl-C, SIGTERM: close waits for no build in flight
            abandon(ex)
        raise
    finally:
        if ex is not None:
            ex.close()
        out.close()
        if recorder is not None:
            recorder.finish(error)
    rows = [done[p.row["key"]] for p in preps if p.row["key"] in done]
    return BatchReport(
        rows,
        judged=len(todo),
        skipped=len(preps) - len(todo),
        out=out.dir,
        run_id=recorder.run_id if recorder else None,
        executor=summary,
    )


def _collect(
    preps: list[Prepared],
    todo: list[Prepared],
    futs: dict[Future, Prepared],
    done: dict[str, dict[str, Any]],
    out: BatchOutput,
    progress: BatchProgress,
    recorder: Any,
) -> None:
    """A row for each kernel of ``todo`` as its verdict arrives (the earlier kernels stored first,
    with ``recorder``), written in this thread: the output files and the store have one writer."""
    from harness.store import config_key
    from harness.tasksize import record_globals

    def emit(p: Prepared, verdict: Any, input_error: str | None, harness_error: str | None) -> None:
        row = dict(p.row)
        if verdict is not None:
            if p.task is not None:
                record_globals(verdict, p.task)  # --set values in the verdict (harness/tasksize.py)
            fill_verdict(row, verdict)
            row["verdict_file"], row["verdict_sha256"] = out.write_verdict(
                p.pair.id, row["key"], verdict
            )
        else:
            row["status"] = INPUT_ERROR if input_error else HARNESS_ERROR
            row["message"] = short(input_error or harness_error or "")
        out.append(row)
        done[row["key"]] = row
        progress.kernel(row)
        if (
            recorder is not None
            and p.task is not None
            and p.source is not None
            and not harness_error
        ):
            recorder.record(
                p.pair.id,
                p.task,
                p.source,
                verdict,
                parse_error=input_error and short(input_error),
                config_key=config_key(p.config) if p.config is not None else None,
            )

    if recorder is not None:  # kernels judged by an earlier invocation, stored unless already there
        for p in preps:
            row = done.get(p.row["key"])
            if row is not None and p.task is not None and p.source is not None:
                v = out.read_verdict(row)
                if v is not None or row["status"] == INPUT_ERROR:
                    recorder.record(
                        p.pair.id,
                        p.task,
                        p.source,
                        v,
                        parse_error=row["message"] if v is None else None,
                        config_key=config_key(p.config) if p.config is not None else None,
                    )
    for p in [p for p in todo if p.error is not None]:
        emit(p, None, p.error, None)
    for fut in as_completed(futs):  # resolved before judging opened (compile errors): at once
        emit(futs[fut], *_outcome(futs[fut], fut))
