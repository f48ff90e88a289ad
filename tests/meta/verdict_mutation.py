"""A pytest plugin for the mutation check (tests/meta/test_mutation.py), loaded only by name in a
child pytest: ``python -m pytest -p tests.meta.verdict_mutation ...`` with KH_MUTATE_VERDICT set.

It wraps ``sandbox.judgement.judge`` (the function every ``evaluate()`` call ends in, which returns
the final Verdict) in that child process only: the real judgement runs, then its decision is
replaced. Nothing in the product reads this variable or can be switched this way; without the
``-p`` option the plugin is never imported.

    KH_MUTATE_VERDICT=valid      every verdict valid, no rule (a cheat test must then fail)
    KH_MUTATE_VERDICT=rejected   every verdict rejected timing.wall_clock, the rule host-timer noise
                                 trips (an honest-kernel test must then fail, also one that forgives
                                 that rule)

KH_MUTATE_REPORT names a file that gets one JSON line per test (node id, outcome) and a last line
with the number of verdicts replaced.
"""

from __future__ import annotations

import json
import os

MODE_ENV, REPORT_ENV = "KH_MUTATE_VERDICT", "KH_MUTATE_REPORT"
_replaced = 0


def pytest_configure(config):
    mode = os.environ.get(MODE_ENV, "")
    if mode not in ("valid", "rejected"):
        raise RuntimeError(f"{MODE_ENV} must be 'valid' or 'rejected' when tests.meta.verdict_mutation is loaded, "
                           f"not {mode!r}")
    from sandbox import judgement as judge_module
    from sandbox import rules
    from sandbox.verdict import Status

    real = judge_module.judge

    def mutated(task, source, cfg):
        global _replaced
        v = real(task, source, cfg)
        if mode == "valid":
            v.status, v.rule, v.message = Status.VALID, None, ""
        else:
            v.status, v.rule = Status.REJECTED, rules.WALL_CLOCK
            v.message = "verdict mutation: every verdict rejected"
            v.timings, v.speedups = {}, {}
        _replaced += 1
        return v

    judge_module.judge = mutated


def pytest_report_header(config):
    return f"verdict mutation: every verdict forced {os.environ.get(MODE_ENV)} (tests/meta/verdict_mutation.py)"


def _write(line: dict) -> None:
    if os.environ.get(REPORT_ENV):
        with open(os.environ[REPORT_ENV], "a") as f:
            f.write(json.dumps(line) + "\n")


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        if report.when == "setup" and report.failed:
            outcome = "error"  # a fixture broke: that is not the test catching the mutation
        _write({"node": report.nodeid, "when": report.when, "outcome": outcome})


def pytest_sessionfinish(session, exitstatus):
    _write({"replaced": _replaced})
