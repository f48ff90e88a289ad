"""The candidate worker's write check (sandbox/rules/monitors.py ``Monitor._check_open``) where the build
cache lies under a directory the candidate may write (/tmp, as with ``HARNESS_CACHE=/tmp/...`` or
a CI clone's cache): the allowance of /tmp must not open the caches. Red-team cheat 19f found it
(tests/adversarial/test_redteam_cpu.py::test_build_cache_poisoning_is_rejected, valid with the cache
under /tmp: the read-only mount alone refused the write and the verdict said nothing)."""

from __future__ import annotations

import pytest

from sandbox.rules.monitors import Monitor


@pytest.fixture
def mon(tmp_path):
    cache = tmp_path / "cache" / "build"  # pytest's tmp_path lies under /tmp: the case at hand
    tier, shared = cache / "cand" / "abc", cache / "shared"
    active = tier / ("0" * 64)
    for d in (tier / "triton", shared, active):
        d.mkdir(parents=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    m = Monitor(str(tmp_path / "cand.py"), [str(scratch), "/tmp", str(tier / "triton")], [],
                guarded=[str(tier), str(shared)], dynamic_allowed=[str(active)])
    return m, tier, shared, scratch, active


@pytest.mark.parametrize("where", ["shared tier", "own tier, outside a build"])
def test_a_write_into_a_build_cache_under_tmp_is_refused_and_recorded(mon, where):
    m, tier, shared, _, _ = mon
    target = (shared if where == "shared tier" else tier) / "planted.so"
    with pytest.raises(PermissionError):
        m._check_open((str(target), "w", None))
    assert m.events and m.events[-1]["rule"] == "sandbox.filesystem", m.events
    assert "build cache" in m.events[-1]["what"]


@pytest.mark.parametrize("where", ["scratch", "tmp", "JIT cache in the tier", "build in progress"])
def test_writes_the_candidate_may_make_pass(mon, where, tmp_path):
    m, tier, _, scratch, active = mon
    target = {"scratch": scratch / "x", "tmp": tmp_path / "loose.txt", "JIT cache in the tier": tier / "triton" / "k.json",
              "build in progress": active / "main.o"}[where]
    m._check_open((str(target), "w", None))
    assert m.events == []
