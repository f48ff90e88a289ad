"""One offline ``harness run`` over relu with the real evaluator on the CPU, shared by a session.

The root conftest's ``offline_relu_run`` fixture (scope="session") runs it once, through the CLI in
a child process, the first time a test asks; every test that reads its results gets the same
folder and must treat it as read-only (open the store, never write to it; a test that resumes
or extends a run makes its own). The settings are the ones tests compared against before: the
local executor with one build worker (tests/executors/test_ray_executor.py compares the Ray
executor's statuses with it), seed 5, three evaluations, the fast timing caps.
"""

from __future__ import annotations

import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support import cli
from tests.support.evalconfig import FAST_EVAL_OPTIONS, FAST_OVERRIDES

METHOD, OP, EVALUATIONS, SEED, RUN_ID = "evoengineer-free", "relu", 3, 5, "offline-relu"
ARGS = ("run", "--method", METHOD, "--llm", "offline", "--ops", OP, "--budget", str(EVALUATIONS), "--seed", str(SEED),
        "--device", "cpu", "--executor", "local", "--compile-workers", "1", "--run-id", RUN_ID, "--quiet",
        *FAST_EVAL_OPTIONS)  # fmt: skip


@dataclass(frozen=True)
class OfflineRun:
    results: Path  # the results folder (harness.sqlite, ...): read-only for tests
    run_id: str
    returncode: int
    output: str  # stdout + stderr of the command

    def query(self, sql: str, *params) -> list[tuple]:
        con = sqlite3.connect(f"file:{self.results / 'harness.sqlite'}?mode=ro", uri=True, timeout=60)
        try:
            return con.execute(sql, params).fetchall()
        finally:
            con.close()

    def statuses(self) -> list[tuple[str, str, str, str | None]]:
        """(op, mode, status, rule) of every verdict, in the order they were stored."""
        return [tuple(r) for r in self.query("SELECT op, mode, status, rule FROM verdicts WHERE run_id=? "
                                             "ORDER BY verdict_id", self.run_id)]


def run_offline_relu(results: Path) -> OfflineRun:
    r: subprocess.CompletedProcess = cli.harness(*ARGS, "--results", results, timeout=1500)
    return OfflineRun(results=results, run_id=RUN_ID, returncode=r.returncode, output=r.stdout + r.stderr)


def run_config(results: Path, **kw):
    """The same run as a RunConfig (for the runner in the test process, with another executor)."""
    from harness.methods.base import Budget
    from harness.runner import RunConfig

    base = dict(method=METHOD, ops=[OP], budget=Budget(evaluations=EVALUATIONS), device="cpu", results=results,
                executor="local", compile_workers=1, seed=SEED, run_id=RUN_ID, progress=False,
                eval_overrides=dict(FAST_OVERRIDES),
                seed_kernels="suite")  # the CLI's default (--seed-kernels suite); RunConfig's is none
    return RunConfig(**{**base, **kw})
