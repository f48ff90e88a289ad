"""Judge a candidate with the fast configuration and assert what the verdict must be.

An honest kernel's test fails on any verdict but ``valid`` (``assert_valid``); a cheat's test
names the statuses and rule ids it accepts (``assert_caught``), and ``valid`` is never among
them unless the test says why. ``describe`` is what both print on failure.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sandbox.evaluate import evaluate
from sandbox.intake.task import Task, load_task
from sandbox.verdict import Status, Verdict
from tests.support.evalconfig import fast_config


def judge(task: Task | str | Path, source: str, **kw: Any) -> Verdict:
    """The real evaluator on ``source`` against ``task`` (a Task or a task file), with
    ``fast_config(**kw)``."""
    if not isinstance(task, Task):
        task = load_task(task)
    return evaluate(task, source, fast_config(**kw))


def describe(v: Verdict) -> str:
    return f"status={v.status.value} rule={v.rule} message={v.message!r}\nlogs={v.logs[-1500:]!r}"


def assert_valid(v: Verdict) -> None:
    """An honest kernel: valid, no rule, every trial passed, a measured speedup."""
    assert v.status is Status.VALID and v.rule is None, describe(v)
    assert v.trials and all(t.passed for t in v.trials), describe(v)
    assert "candidate" in v.timings and v.speedups, f"valid without timings: {describe(v)}"


def assert_caught(v: Verdict, statuses: Iterable[Status], rules: Iterable[str | None]) -> None:
    """A cheat: one of ``statuses`` with one of ``rules``, and no speedup."""
    statuses, rules = tuple(statuses), tuple(rules)
    assert v.status in statuses, f"expected {[s.value for s in statuses]}; {describe(v)}"
    assert v.rule in rules, f"expected rule in {rules}; {describe(v)}"
    if v.status is not Status.VALID:
        assert not v.speedups, f"a caught cheat carries speedups: {describe(v)}"
