"""A batch's rows as verdicts arrive: the output folder (results.jsonl, results.csv, verdicts/) and
the store's run, with one writer (the batch's own thread, harness/batch/driver.py), opened at the
first row, so that a batch the task check refuses before any row writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from harness.batch.output import HARNESS_ERROR, INPUT_ERROR, BatchOutput, fill_verdict, short


class RowSink:
    """The batch's rows, files and store run, opened at the first row (``open``): with the task
    check beside the judging, nothing is written before a row of a task that passed, so a refusal
    that comes first writes nothing."""

    def __init__(self, preps: list[Any], todo: list[Any], out: BatchOutput, keys: dict[str, str], opts: Any,
                 progress: Callable[[], Any]) -> None:
        """``preps``/``todo``: the batch's Prepared kernels and those to judge now; ``opts``: its
        BatchOptions; ``progress()``: its progress lines (BatchProgress), made at ``open``."""
        self.preps, self.todo, self.out, self.keys, self.opts = preps, todo, out, keys, opts
        self._progress = progress
        self.done: dict[str, dict[str, Any]] | None = None
        self.progress: Any = None
        self.recorder: Any = None

    def open(self) -> None:
        """Make the folder (and the store's run) from the earlier rows; the rows of kernels unusable
        before judging (input errors) first."""
        if self.done is not None:
            return
        opts = self.opts
        self.done = self.out.open(self.keys)
        self.progress = self._progress()
        if opts.store is not None:
            from harness.batch.record import StoreRecorder

            cfg = {k: v for k, v in asdict(opts).items() if k not in ("out", "store", "progress")}
            self.recorder = StoreRecorder(
                opts.store,
                self.out.dir,
                label=opts.label,
                device=opts.device,
                rules=opts.rules,
                config={**cfg, "out": str(opts.out)},
                n_kernels=len(self.preps),
            )
            self._record_earlier()
        for p in [p for p in self.todo if p.error is not None]:
            self.emit(p, None, p.error, None)

    def _record_earlier(self) -> None:
        """Kernels judged by an earlier invocation, stored unless already there."""
        from harness.store import config_key

        assert self.done is not None
        for p in self.preps:
            row = self.done.get(p.row["key"])
            if row is not None and p.task is not None and p.source is not None:
                v = self.out.read_verdict(row)
                if v is not None or row["status"] == INPUT_ERROR:
                    self.recorder.record(
                        p.pair.id,
                        p.task,
                        p.source,
                        v,
                        parse_error=row["message"] if v is None else None,
                        config_key=config_key(p.config) if p.config is not None else None,
                    )

    def emit(self, p: Any, verdict: Any, input_error: str | None, harness_error: str | None) -> None:
        from harness.store import config_key
        from harness.tasksize import record_globals

        self.open()
        assert self.done is not None and self.progress is not None
        row = dict(p.row)
        if verdict is not None:
            if p.task is not None:
                record_globals(verdict, p.task)  # --set values in the verdict (harness/tasksize.py)
            fill_verdict(row, verdict)
            row["verdict_file"], row["verdict_sha256"] = self.out.write_verdict(p.pair.id, row["key"], verdict)
        else:
            row["status"] = INPUT_ERROR if input_error else HARNESS_ERROR
            row["message"] = short(input_error or harness_error or "")
        self.out.append(row)
        self.done[row["key"]] = row
        self.progress.kernel(row)
        if self.recorder is not None and p.task is not None and p.source is not None and not harness_error:
            self.recorder.record(
                p.pair.id,
                p.task,
                p.source,
                verdict,
                parse_error=input_error and short(input_error),
                config_key=config_key(p.config) if p.config is not None else None,
            )

    def close(self, error: str | None) -> None:
        self.out.close()
        if self.recorder is not None:
            self.recorder.finish(error)
