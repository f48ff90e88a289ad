"""Every gpu-marked test is run by the GPU entry point (harness/bench/tools/gpu_tests.py), in parts that fit
one device call, and the records of those runs (docs/records/gpu-runs/*.json) say which ran.

A gpu test that no record covers, or that failed at its last recorded run, fails this check
(since session 15, when all 181 had a recorded run and none failed at its last): a new gpu test
lands with its GPU record, and a GPU failure is fixed or recorded fixed before CI is green again.
``KH_GPU_COVERAGE=warn`` turns the listing into a warning (a branch waiting for device time); the
plan and the records' form always fail.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "harness" / "bench" / "tools"))
import gpu_tests  # noqa: E402


@pytest.fixture(scope="module")
def nodes() -> list[str]:
    return gpu_tests.gpu_nodes()


def test_the_gpu_files_are_the_ones_that_mark_tests_gpu(nodes):
    files = {n.split("::")[0] for n in nodes}
    assert files == set(gpu_tests.gpu_files()), "a file names pytest.mark.gpu but collects no gpu test"
    assert files <= set(gpu_tests.FILE_DEFAULT_S), (
        f"no time estimate for {sorted(files - set(gpu_tests.FILE_DEFAULT_S))}: add it to FILE_DEFAULT_S "
        "in harness/bench/tools/gpu_tests.py (seconds per test on a fresh GPU machine)")


def test_every_gpu_test_is_in_exactly_one_part_that_fits_a_device_call(nodes):
    last = gpu_tests.latest(gpu_tests.load_records())
    parts = gpu_tests.plan(nodes, {})  # as --part N runs them
    assert sorted(n for p in parts for n in p) == sorted(nodes)  # each once
    for i, p in enumerate(parts, 1):
        est = max(sum(gpu_tests.estimate(n, {}) for n in p), sum(gpu_tests.estimate(n, last) for n in p))
        assert len(p) == 1 or est <= gpu_tests.PART_S, (i, est, p)
        assert est < gpu_tests.BUDGET_S, f"part {i} alone is estimated at {est:.0f} s: split the test {p}"


def test_a_record_is_read_back_and_covers_only_what_ran(tmp_path):
    tests = {"a.py::t1": {"outcome": "passed", "seconds": 2.0}, "a.py::t2": {"outcome": "skipped", "seconds": 0.0},
             "a.py::t3": {"outcome": "failed", "seconds": 5.0}, "a.py::gone": {"outcome": "passed", "seconds": 1.0}}
    (path,) = gpu_tests.write_record("t", tests, 1, 8.0, {"gpu": "NVIDIA H100 80GB HBM3", "torch": "x", "cuda": "y"},
                                     folder=tmp_path)
    assert path.name.endswith("-nvidia-h100-80gb-hbm3-t.json")
    recs = gpu_tests.load_records(tmp_path)
    cov = gpu_tests.coverage(["a.py::t1", "a.py::t2", "a.py::t3"], recs)
    assert cov == {"uncovered": ["a.py::t2"], "failing": ["a.py::t3"], "stale": ["a.py::gone"]}
    assert gpu_tests.estimate("a.py::t3", gpu_tests.latest(recs)) == 5.0
    bad = json.loads(path.read_text())
    bad["tests"]["a.py::t1"]["outcome"] = "fine"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"tests\['a.py::t1'\]\.outcome"):
        gpu_tests.load_records(tmp_path)


def test_gpu_tests_that_no_recorded_run_covers_are_listed(nodes):
    records = gpu_tests.load_records()  # raises, naming the file and field, on a malformed record
    cov = gpu_tests.coverage(nodes, records)
    lines = [f"{what}: {n}" for what in ("uncovered", "failing", "stale") for n in cov[what]]
    if lines:
        msg = (f"{len(cov['uncovered'])} of {len(nodes)} gpu tests have no recorded GPU run, "
               f"{len(cov['failing'])} failed at their last, {len(cov['stale'])} recorded ids are gone "
               f"(python harness/bench/tools/gpu_tests.py --missing on the GPU, then commit its record):\n" + "\n".join(lines))
        if os.environ.get("KH_GPU_COVERAGE") == "warn":
            warnings.warn(msg, UserWarning, stacklevel=1)
        else:
            pytest.fail(msg)


def test_shards_split_every_test_once_and_a_pytest_log_is_read_back(nodes):
    groups = gpu_tests.shard(nodes, 4, {})
    assert sorted(n for g in groups for n in g) == sorted(nodes) and len(groups) == 4
    totals = [sum(gpu_tests.estimate(n, {}) for n in g) for g in groups]
    assert max(totals) - min(totals) <= max(gpu_tests.estimate(n, {}) for n in nodes), totals
    log = ("PASSED tests/a.py::t[x]\nFAILED tests/a.py::u - AssertionError\n"
           "12.50s call     tests/a.py::t[x]\n0.50s setup    tests/a.py::t[x]\n3.00s call     tests/a.py::u\n")
    assert gpu_tests.parse_log(log) == {"tests/a.py::t[x]": {"outcome": "passed", "seconds": 13.0, "message": ""},
                                        "tests/a.py::u": {"outcome": "failed", "seconds": 3.0, "message": ""}}


def test_a_test_file_given_to_nodes_stands_for_its_gpu_tests(nodes):
    """``--nodes tests/evaluator/test_devarena.py`` runs that file's gpu tests (session 28 gave it file
    names and the call's GPU tests did not run); a name that is no gpu test stays, to be refused."""
    f = "tests/evaluator/test_devarena.py"
    mine = [n for n in nodes if n.startswith(f + "::")]
    assert mine and gpu_tests.expand_nodes([f], nodes) == mine
    one = mine[0].split("[")[0]
    assert gpu_tests.expand_nodes([one, f], nodes)[0].startswith(one)
    assert sorted(gpu_tests.expand_nodes([one, f], nodes)) == sorted(mine)
    assert gpu_tests.expand_nodes(["tests/nowhere.py"], nodes) == ["tests/nowhere.py"]
