"""The serial executor: each candidate judged in the calling thread (compile, then time),
exactly what the runner did before executors existed."""

from __future__ import annotations

from concurrent.futures import Future

from harness.executors.base import ExecutorStats
from sandbox.contract import EvalConfig, Task, Verdict


class SerialExecutor:
    name = "serial"

    def __init__(self) -> None:
        self.stats = ExecutorStats()

    def judge(self, task: Task, source: str, config: EvalConfig) -> Verdict:
        import time

        from sandbox.contract import evaluate

        self.stats.mark_submit()
        t0 = time.monotonic()
        try:
            v = evaluate(task, source, config)
        finally:
            with self.stats.lock:
                self.stats.busy_s += time.monotonic() - t0
                self.stats.judged += 1
            self.stats.mark_done()
        c = v.durations_s.get("compile")
        if c:
            with self.stats.lock:
                self.stats.build_compile_s.append(float(c))
        return v

    def submit(self, task: Task, source: str, config: EvalConfig) -> Future[Verdict]:
        f: Future[Verdict] = Future()
        try:
            f.set_result(self.judge(task, source, config))
        except Exception as e:  # noqa: BLE001 - delivered through the future
            f.set_exception(e)
        return f

    def close(self) -> None:
        pass
