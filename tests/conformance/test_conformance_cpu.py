"""The conformance set's CPU rows (tests/conformance/manifest.py), each judged for real (jailed
worker subprocesses, real C++ builds warmed into the build cache's trusted tier first) under
every rule set whose expectation differs, plus issue 15 item 2: the same sources judged with
and without the compile cuts get identical statuses."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Verdict
from tests.adversarial.redteam import Case, config, describe, warm_build_cache

from .manifest import Row, rows

pytestmark = pytest.mark.slow
CPU = rows("cpu")


@pytest.fixture(scope="module", autouse=True)
def _warm():
    built = [r.path() for r in CPU if "load_inline" in r.path().read_text()]  # shared sources: one build
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(warm_build_cache, built))


def judge(row: Row, rules: str, **kw) -> Verdict:
    case = Case(row.kernel, row.task, ())
    cfg = config(case, rules=rules, correctness_trials=2, **kw)
    return evaluate(load_task(row.task_path()), row.path().read_text(), cfg)


def check(row: Row, rules: str, v: Verdict) -> None:
    status, rule = row.expected(rules)
    assert (v.status.value, v.rule) == (status, rule), f"{row.kernel} under {rules}: " + describe(v)
    if row.passes_1e2 is not None:
        assert v.tolerance.get("passes_1e-2") is row.passes_1e2, v.tolerance


@pytest.mark.parametrize("row", CPU, ids=[r.kernel for r in CPU])
def test_cpu_conformance_kernel_gets_its_expected_verdict_under_each_rule_set(row):
    for rules in row.rule_sets():
        check(row, rules, judge(row, rules))
