"""Orchestration of ``harness run``: ops of a run (``op.OpRunner``), the whole run
(``orchestrate.run``), resume answers (``resume``), budget meter (``metering``), op
selection and task context (``tasks``), progress and summary (``progress``)."""

from harness.runner.orchestrate import RunConfig, RunReport, run

__all__ = ["RunConfig", "RunReport", "run"]
