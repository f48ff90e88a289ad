"""The mutation check: do the tests that defend the rules fail when the judge decides wrongly?

A child pytest runs a small, representative set of tests with the judge's final decision
replaced in that process only (tests/meta/verdict_mutation.py): with every verdict forced
``valid`` each cheat test listed must fail, and with every verdict forced ``rejected``
(timing.wall_clock) each honest-kernel test listed must fail. A test that still passes accepts
the outcome it exists to exclude. The cheats are CPU ones whose candidates share one extension
(built once into the build cache by their module's fixture), so both runs take about a minute.

The node ids are written out: a renamed or removed test fails this check by name (update the
lists) instead of leaving it to check nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CPU_CHEAT = "tests/adversarial/test_redteam_cpu.py::test_cheat_is_caught_with_its_rule"
CHEATS = [  # every verdict forced valid: each must fail
    f"{CPU_CHEAT}[cheat_02a_torch_op]",
    f"{CPU_CHEAT}[cheat_02b_subclass_model]",
    f"{CPU_CHEAT}[cheat_07a_perf_counter]",
    f"{CPU_CHEAT}[cheat_12c_stack_inspect]",
    "tests/adversarial/test_redteam_protocol.py::test_hooks_around_trusted_steps_are_rejected[cheat_29b_dispatch_mode_prepare]",
    "tests/evaluator/test_statuses.py::test_wrong_values_are_incorrect_with_failing_trial",
]
HONEST = [  # every verdict forced rejected timing.wall_clock: each must fail
    "tests/adversarial/test_redteam_cpu.py::test_honest_candidate_is_valid[honest_cpu_relu]",
    "tests/adversarial/test_redteam_protocol.py::test_honest_relu_is_still_valid_with_the_hooks_checks",
    "tests/llm/test_llm_offline_kernels.py::test_offline_cpu_kernel_for_smoke_op_is_valid[relu]",
    "tests/evaluator/test_statuses.py::test_honest_cpp_kernel_is_valid_with_timings",
]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _start(mode: str, nodes: list[str], report: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("KH_CI_SKIP_POLICY", "PYTEST_ADDOPTS")}
    env.update({"KH_MUTATE_VERDICT": mode, "KH_MUTATE_REPORT": str(report), "PYTHONUNBUFFERED": "1"})
    return subprocess.Popen([sys.executable, "-m", "pytest", "-p", "tests.meta.verdict_mutation", "-p", "no:cacheprovider",
                             "-q", "-rN", "--no-header", *nodes], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _outcomes(report: Path) -> tuple[dict[str, str], int]:
    lines = [json.loads(x) for x in report.read_text().splitlines()] if report.exists() else []
    got = {d["node"]: d["outcome"] for d in lines if "node" in d}
    replaced = next((d["replaced"] for d in lines if "replaced" in d), 0)
    return got, replaced


def test_cheat_tests_fail_when_every_verdict_is_valid_and_honest_tests_when_every_verdict_is_rejected(tmp_path):
    runs = {mode: (nodes, tmp_path / f"{mode}.jsonl") for mode, nodes in (("valid", CHEATS), ("rejected", HONEST))}
    procs = {mode: _start(mode, nodes, report) for mode, (nodes, report) in runs.items()}  # both at once
    outs = {mode: p.communicate(timeout=840)[0] for mode, p in procs.items()}
    for mode, (nodes, report) in runs.items():
        out, rc = outs[mode], procs[mode].returncode
        assert rc not in (4, 5), f"forced {mode}: pytest could not collect the listed tests (renamed?):\n{out[-3000:]}"
        got, replaced = _outcomes(report)
        missing = [n for n in nodes if n not in got]
        assert not missing, f"forced {mode}: these tests did not run (renamed or removed? update the list): {missing}\n{out[-3000:]}"
        survived = [n for n in nodes if got[n] != "failed"]
        assert not survived, (f"forced {mode}: these tests did not fail, so they accept the verdict they exist to "
                              f"exclude: {[(n, got[n]) for n in survived]}\n{out[-3000:]}")
        assert replaced >= len(nodes), f"forced {mode}: only {replaced} verdicts went through the judge\n{out[-3000:]}"
