"""The judging worker's Triton cache (sandbox/build/tritoncache.py): it reads what the warm-apart worker
built into the read-only build cache, writes its own misses to a private directory, and never
writes into the read-only tier (a miss there was a false runtime error). Triton itself is not
installed on the CPU test box; the manager's behaviour is our own code either way."""

from __future__ import annotations

import json
import os

import pytest

from sandbox.build import tritoncache
from sandbox.build.tritoncache import RO_ENV, OverlayCacheManager
from tests.evaluator.conftest import session_spec


def _tree(top):
    return sorted(os.path.relpath(os.path.join(d, n), top) for d, _, ns in os.walk(top) for n in ns)


@pytest.fixture
def tiers(tmp_path, monkeypatch):
    ro, private = tmp_path / "build-cache" / "triton", tmp_path / "scratch" / "triton"
    built = ro / "KEYA"
    built.mkdir(parents=True)
    (built / "k.cubin").write_bytes(b"\x7fELF-from-warm-apart")
    (built / "k.json").write_text('{"name": "k"}')
    (built / "__grp__k.json").write_text(json.dumps({"child_paths": {
        "k.cubin": str(built / "k.cubin"), "k.json": str(built / "k.json")}}))
    for k, v in tritoncache.overlay_env(str(ro), str(private)).items():
        monkeypatch.setenv(k, v)
    return ro, private


def test_a_kernel_built_apart_is_read_from_the_read_only_tier(tiers):
    ro, _ = tiers
    m = OverlayCacheManager("KEYA")
    assert m.get_file("k.cubin") == str(ro / "KEYA" / "k.cubin")
    assert m.get_group("k.json") == {"k.cubin": str(ro / "KEYA" / "k.cubin"), "k.json": str(ro / "KEYA" / "k.json")}


def test_a_miss_is_written_privately_and_the_build_cache_is_untouched(tiers):
    ro, private = tiers
    before = _tree(ro)
    m = OverlayCacheManager("KEYB")  # a key the warm-apart worker never saw (cheat #35's per-call key)
    assert m.get_file("relu.autotune.json") is None
    p = m.put(json.dumps({"configs_timings": [], "key": "x"}), "relu.autotune.json", binary=False)
    c = m.put(b"cubin", "relu.cubin")
    g = m.put_group("relu.json", {"relu.cubin": c})
    assert p.startswith(str(private)) and c.startswith(str(private)) and g.startswith(str(private))
    assert OverlayCacheManager("KEYB").get_group("relu.json") == {"relu.cubin": c}
    assert _tree(ro) == before
    assert not [n for n in _tree(private) if "tmp.pid_" in n]  # temp dirs gone


def test_what_the_worker_wrote_shadows_the_read_only_copy(tiers):
    ro, _ = tiers
    m = OverlayCacheManager("KEYA")
    mine = m.put(b"rebuilt", "k.cubin")
    assert m.get_file("k.cubin") == mine != str(ro / "KEYA" / "k.cubin")


def test_without_the_read_only_tier_it_is_a_private_cache(tiers, monkeypatch):
    """What the harness's own Triton warm-up sees (sandbox/worker/tritonwarm.py clears RO_ENV): nothing a
    candidate put in its build cache can reach the worker before its seal."""
    monkeypatch.delenv(RO_ENV)
    assert OverlayCacheManager("KEYA").get_file("k.cubin") is None


def test_no_private_directory_is_a_clear_error(tiers, monkeypatch):
    monkeypatch.delenv("TRITON_CACHE_DIR")
    with pytest.raises(RuntimeError, match="TRITON_CACHE_DIR"):
        OverlayCacheManager("KEYA")


def _env(role, device, cache_ro, tmp_path):
    return session_spec(role, device, str(tmp_path / "own"), cache_ro=cache_ro)


def test_a_judging_worker_built_apart_gets_the_overlay(tmp_path):
    spec = _env("candidate", "cuda", True, tmp_path)
    assert spec.env["TRITON_CACHE_MANAGER"] == tritoncache.MANAGER
    assert spec.env[RO_ENV] == str(tmp_path / "own" / "triton")
    assert spec.env["TRITON_CACHE_DIR"].startswith(spec.scratch + "/")
    assert spec.env["TRITON_CACHE_AUTOTUNING"] == "1"


def test_a_worker_that_builds_writes_its_own_cache_and_the_reference_is_left_alone(tmp_path):
    warm = _env("candidate", "cuda", False, tmp_path)  # the warm-apart worker: fills the build cache
    assert warm.env["TRITON_CACHE_DIR"] == str(tmp_path / "own" / "triton")
    assert warm.env["TRITON_CACHE_AUTOTUNING"] == "1" and "TRITON_CACHE_MANAGER" not in warm.env
    ref = _env("reference", "cuda", False, tmp_path)
    assert "TRITON_CACHE_AUTOTUNING" not in ref.env and "TRITON_CACHE_MANAGER" not in ref.env
    cpu = _env("candidate", "cpu", True, tmp_path)
    assert "TRITON_CACHE_MANAGER" not in cpu.env
