"""The reference worker's compile caches across judgements of one op (sandbox/check/refcache.py):
the torch.compile baseline compiled by one judgement is found by the next one's fresh
reference worker, through a copy the parent makes; the persistent entry is never mounted in
any worker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox.check import refcache
from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.verdict import Mode, Status
from tests.adversarial.redteam import TASKS, Case, config, describe


def _tree(top: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = top / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def test_seed_copies_the_entry_and_harvest_copies_back_only_new_files(tmp_path: Path):
    persist, cache = tmp_path / "persist", tmp_path / "worker-cache"
    _tree(persist, {"inductor/fxgraph/a/entry": b"old", "triton/K1/__grp__k.json": b"{}", "triton/K1/k.cubin": b"x"})
    assert refcache.seed(str(persist), str(cache)) == 3
    assert (cache / "triton/K1/k.cubin").read_bytes() == b"x"
    (cache / "inductor/fxgraph/a/entry").write_bytes(b"rewritten by the worker")  # not new: not copied back
    _tree(cache, {"triton/K2/__grp__k2.json": b"{}", "triton/K2/k2.cubin": b"y"})
    assert refcache.harvest(str(cache), str(persist)) == 2
    assert (persist / "inductor/fxgraph/a/entry").read_bytes() == b"old"
    assert (persist / "triton/K2/k2.cubin").read_bytes() == b"y"
    assert not [p for p in persist.rglob("*") if ".kh-tmp-" in p.name]


def test_group_files_are_copied_after_the_files_they_name(tmp_path: Path):
    _tree(tmp_path, {"t/K/__grp__k.json": b"{}", "t/K/z.cubin": b"", "t/K/a.ptx": b""})
    order = refcache._files(str(tmp_path))
    assert order[-1].endswith("__grp__k.json"), order


def test_a_harvest_over_the_cap_copies_nothing(tmp_path: Path, monkeypatch):
    cache, persist = tmp_path / "c", tmp_path / "p"
    _tree(cache, {"inductor/big": b"0" * 4096})
    monkeypatch.setattr(refcache, "MAX_HARVEST_BYTES", 1024)
    assert refcache.harvest(str(cache), str(persist)) == 0
    assert not persist.exists()


def test_entries_are_per_task_and_device_kind(tmp_path: Path):
    a = refcache.entry_dir(tmp_path, "task A", "cuda:0")
    assert a == refcache.entry_dir(tmp_path, "task A", "cuda:1")
    assert a != refcache.entry_dir(tmp_path, "task A", "cpu")
    assert a != refcache.entry_dir(tmp_path, "task B", "cuda:0")


@pytest.mark.slow
def test_the_second_judgement_of_an_op_starts_from_the_first_ones_compiled_baseline(tmp_path: Path):
    """Final mode with the compile baseline on CPU (inductor's C++ backend): the first
    judgement harvests its reference worker's compile caches, the second seeds its own fresh
    reference worker with them and adds nothing; both time the compile baseline."""
    case = Case("honest_cpu_relu", "relu", (Status.VALID,), mode=Mode.FINAL)
    task = load_task(TASKS / "relu.py")
    cfg = config(case, baselines=("eager", "compile"), build_dir=str(tmp_path / "build"), max_timing_s=0.5)
    first = evaluate(task, case.source(), cfg)
    assert first.status is Status.VALID, describe(first)
    assert "compile" in first.timings, first.timings.keys()
    rc1 = first.evidence["reference_cache"]
    assert rc1["seeded_files"] == 0 and rc1["harvested_files"] > 0, rc1
    entry = refcache.entry_dir(tmp_path / "build", task.source, "cpu")
    assert os.path.isdir(os.path.join(entry, refcache.INDUCTOR))
    second = evaluate(task, case.source(), cfg)
    assert second.status is Status.VALID, describe(second)
    rc2 = second.evidence["reference_cache"]
    assert rc2["seeded_files"] == rc1["harvested_files"] and rc2["harvested_files"] == 0, (rc1, rc2)
    assert "compile" in second.timings


# -- baselines booked across judgements (sandbox/timing/baselinebook.py) ----------------------------

def _relu_twice(monkeypatch, drift: float):
    from sandbox.timing import baselinebook

    baselinebook.clear()
    monkeypatch.setattr(baselinebook, "DRIFT", drift)
    case = Case("honest_cpu_relu", "relu", (Status.VALID,), mode=Mode.FEEDBACK)
    task = load_task(TASKS / "relu.py")
    # timing to its cap (a CI target no run reaches): many rounds, so the sentinel's share shows
    cfg = config(case, reuse_baselines=True, feedback_timing_s=0.4, target_ci=1e-6, seed=7)
    first = evaluate(task, case.source(), cfg)
    assert first.status is Status.VALID, describe(first)
    second = evaluate(task, case.source(), cfg)
    assert second.status is Status.VALID, describe(second)
    return first, second, baselinebook.key(task.source, "cpu", None, cfg.profile, "eager")


@pytest.mark.slow
def test_a_valid_judgements_baseline_is_reused_beside_a_sentinel_share_of_fresh_calls(monkeypatch):
    from sandbox.timing import baselinebook

    first, second, k = _relu_twice(monkeypatch, drift=10.0)  # any drift agrees: the reuse path
    b1, b2 = first.evidence["baseline_book"]["eager"], second.evidence["baseline_book"]["eager"]
    assert not b1["reused"] and b1["book_n"] == 0 and b1["fresh_n"] >= baselinebook.MIN_BOOK, b1
    assert b2["reused"] and b2["book_n"] == b1["fresh_n"], b2
    assert baselinebook.MIN_FRESH <= b2["fresh_n"] < b1["fresh_n"] / 2, (b1, b2)  # about 1 block in 3 rounds
    assert second.timings["eager"].n == b2["book_n"] + b2["fresh_n"]
    assert second.timings["candidate"].n > b2["fresh_n"]


@pytest.mark.slow
def test_a_booked_baseline_that_drifted_is_not_used_and_is_dropped(monkeypatch):
    from sandbox.timing import baselinebook

    first, second, k = _relu_twice(monkeypatch, drift=-1.0)  # nothing agrees: the fallback path
    b2 = second.evidence["baseline_book"]["eager"]
    assert not b2["reused"] and b2["book_n"] > 0, b2
    assert second.timings["eager"].n == b2["fresh_n"]  # the fresh calls alone
    assert baselinebook.get(k) is None  # the next judgement times it in full


def test_pool_uses_the_book_only_when_the_medians_agree():
    from sandbox.timing import baselinebook

    s, ev = baselinebook.pool([100.0] * 40, [103.0] * 10)
    assert ev["reused"] and len(s) == 50
    s, ev = baselinebook.pool([100.0] * 40, [110.0] * 10)
    assert not ev["reused"] and s == [110.0] * 10
    assert not baselinebook.put(("k",), [1.0] * (baselinebook.MIN_BOOK - 1))  # too few to book
