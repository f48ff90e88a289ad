"""Judging a batch of (reference, candidate) pairs through an executor, resumably.

    report = run_batch(pairs, BatchOptions(out=Path("out"), device="cpu", mode="final"))

Every pair gets the ``EvalConfig`` that ``harness eval`` would build for it (the judging
policy, ``harness.policy.eval_config``), so verdicts are those of one-at-a-time evaluation. All
pairs are submitted at once to the executor (``local``: compile workers build ahead of one
timing lane per device; ``ray``; ``serial``). With the local executor, ``before_judging``
(eval-batch's task check) runs beside the builds and the judging, and a task's candidates are
judged once its own check passed (harness/batch/checkgate.py). Rows are written in the calling
thread as verdicts arrive (harness/batch/sink.py), so the output files and the store have one
writer.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from harness.batch.checkgate import BeforeJudging, CheckGate
from harness.batch.inputs import Pair
from harness.batch.output import (
    HARNESS_ERROR,
    INPUT_ERROR,
    BatchOutput,
    base_row,
    row_key,
)
from harness.batch.sink import RowSink
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
    before_judging: BeforeJudging | None,
) -> tuple[Any, dict[Future, Prepared], CheckGate | None]:
    """(the executor, its futures, the check's gate) with every unit of ``judge`` submitted; (None,
    {}, None) when there is none. ``before_judging`` (eval-batch: the task check) runs beside the
    local executor's builds and judging, which it opens task by task (made with ``hold_judging``;
    harness/batch/checkgate.py); the ray and serial executors start after it returned. Where it
    raises before anything was submitted, the error is raised and nothing was judged."""
    hold = before_judging is not None and opts.executor == "local" and bool(judge)
    if before_judging is not None and not hold:
        before_judging(lambda task, config: None)
    if not judge:
        return None, {}, None
    ex = _executor(opts, preps, hold_judging=hold)
    try:
        futs = {ex.submit(p.task, p.source, p.config): p for p in judge}
        gate = CheckGate(before_judging, ex).start() if hold and before_judging is not None else None
    except BaseException:
        abandon(ex)  # the builds in flight given up: close waits for none
        ex.close()
        raise
    return ex, futs, gate


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
    before_judging: BeforeJudging | None = None,
) -> BatchReport:
    """Judge ``pairs`` into ``opts.out``. ``before_judging(on_pass)`` (eval-batch: the task check)
    runs while the local executor's compile workers build; a task's candidates are judged once it
    called ``on_pass(task, config)`` for that task (all of them once it returned), and where it
    raises the batch ends with that error: nothing of a task it did not pass is judged or written,
    and the folder and the store are opened only at the first row that may be written."""
    preps = _prepare(pairs, opts)
    out = BatchOutput(opts.out)
    keys = {p.pair.id: p.row["key"] for p in preps}
    earlier = out.kept(keys)  # a look only: the folder is written at the first row the check lets through
    todo = [p for p in preps if p.row["key"] not in earlier]
    ex, futs, gate = _start(opts, preps, [p for p in todo if p.error is None], before_judging)
    sink = RowSink(preps, todo, out, keys, opts,
                   lambda: BatchProgress(len(preps), len(preps) - len(todo), stream, opts.progress))
    summary: dict[str, Any] = {}
    error = None
    try:
        if gate is None:
            sink.open()
        _collect(futs, sink, gate)
        sink.open()  # nothing was written (everything judged earlier, or nothing to judge): the files all the same
        summary = ex.summary() if ex is not None and hasattr(ex, "summary") else {}
    except BaseException as e:
        refused = gate is not None and e is gate.error
        error = "refused by the task check" if refused else f"interrupted: {type(e).__name__}"
        if ex is not None and (isinstance(e, KeyboardInterrupt) or refused):
            # Ctrl-C, SIGTERM, a refusal: close waits for no build in flight
            abandon(ex)
        raise
    finally:
        if ex is not None:
            ex.close()
        sink.close(error)
    assert sink.done is not None
    rows = [sink.done[p.row["key"]] for p in preps if p.row["key"] in sink.done]
    return BatchReport(
        rows,
        judged=len(todo),
        skipped=len(preps) - len(todo),
        out=out.dir,
        run_id=sink.recorder.run_id if sink.recorder else None,
        executor=summary,
    )


GATE_POLL_S = 0.2  # how often the batch looks at the task check while it runs


def _collect(futs: dict[Future, Prepared], sink: RowSink, gate: CheckGate | None) -> None:
    """A row for each judged kernel as its verdict arrives, written in this thread (the output
    files and the store have one writer); with the task check beside (``gate``), a verdict is held
    until its task passed, and the check's refusal is raised here."""
    pending = set(futs)
    held: list[Future] = []
    while pending or held:
        if gate is not None:
            gate.raise_if_refused()
        checking = gate is not None and not gate.ended.is_set()
        if pending:
            got, pending = wait(pending, timeout=GATE_POLL_S if checking else None, return_when=FIRST_COMPLETED)
            held.extend(got)
        elif gate is not None:
            gate.ended.wait(GATE_POLL_S)  # only verdicts of tasks not yet answered are left
        waiting = []
        for fut in held:
            if gate is None or gate.lets(futs[fut].task, futs[fut].config):
                sink.emit(futs[fut], *_outcome(futs[fut], fut))
            else:
                waiting.append(fut)
        held = waiting
