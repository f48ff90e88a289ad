"""sandbox/build/tiers.py without workers: what a working copy is seeded with, what promotion keeps, the
seal's check, the quota, and deleting what a jailed process left unreadable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox.build import tiers

ENTRY = "a" * 64


def _tier(tmp_path: Path, quota: int | None = None) -> tiers.WorkTier:
    return tiers.WorkTier.open(str(tmp_path / "root"), str(tmp_path / "root" / "cand" / "c0ffee"), quota)


def _build(w: tiers.WorkTier, name: str = ENTRY, body: bytes = b"\x7fELF...") -> None:
    d = Path(w.path) / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "kh_x.so").write_bytes(body)
    (d / ".ok").write_text("ok\n")


def test_promotion_keeps_new_build_entries_only(tmp_path):
    w = _tier(tmp_path)
    _build(w)
    (Path(w.path) / "memo").write_bytes(b"outputs")  # top level: not a build entry
    (Path(w.path) / ("b" * 64)).mkdir()
    (Path(w.path) / ("b" * 64) / "memo").write_bytes(b"no .ok: not a finished build")
    (Path(w.path) / "triton" / "k").mkdir(parents=True)
    (Path(w.path) / "triton" / "k" / "kernel.cubin").write_bytes(b"jit at a call: never kept")
    os.symlink("/etc/passwd", Path(w.path) / ENTRY / "leak")  # a link is never followed or kept
    (Path(w.path) / "torch_extensions" / "x").mkdir(parents=True)
    (Path(w.path) / "torch_extensions" / "x" / "y.so").write_bytes(b"so")
    info = w.promote("build worker")
    assert {k: info[k] for k in ("by", "kept_files", "not_kept")} == {"by": "build worker", "kept_files": 3,
                                                                       "not_kept": 3}, info
    # what was not kept and why, and the sealed entries as a later process finds them (verdict: build_tier)
    assert sorted(x.split(":")[0] for x in info["not_kept_first"]) == ["b" * 64 + "/memo", "memo",
                                                                        "triton/k/kernel.cubin"], info
    assert info["entries"] == {ENTRY[:12]: [".ok", "kh_x.so"]}, info
    kept = sorted(str(p.relative_to(w.own)) for p in Path(w.own).rglob("*") if p.is_file() or p.is_symlink())
    assert kept == [f"{ENTRY}/.ok", f"{ENTRY}/kh_x.so", "torch_extensions/x/y.so"]
    w.close()
    assert not os.path.exists(w.path)
    again = _tier(tmp_path)  # a later judgement's copy: the sealed files, nothing else
    got = sorted(str(p.relative_to(again.path)) for p in Path(again.path).rglob("*") if p.is_file())
    assert got == kept and again.evidence["sealed_files"] == 3 and again.evidence["entries"] == info["entries"]
    again.close()


def test_a_sealed_build_entry_never_changes(tmp_path):
    w = _tier(tmp_path)
    _build(w, body=b"first")
    w.promote("build worker")
    w.close()
    w2 = _tier(tmp_path)
    (Path(w2.path) / ENTRY / "kh_x.so").write_bytes(b"second")  # a later build step rewrites it ...
    (Path(w2.path) / ENTRY / "memo").write_bytes(b"state")  # ... and adds to it
    assert w2.promote("build worker")["kept_files"] == 0
    assert (Path(w2.own) / ENTRY / "kh_x.so").read_bytes() == b"first"
    assert not (Path(w2.own) / ENTRY / "memo").exists()
    w2.close()


@pytest.mark.parametrize("tamper", ["changed", "added", "unsealed"])
def test_a_tier_that_does_not_match_its_seal_is_dropped(tmp_path, tamper):
    w = _tier(tmp_path)
    _build(w)
    w.promote("build worker")
    w.close()
    so = Path(w.own) / ENTRY / "kh_x.so"
    if tamper == "changed":
        so.write_bytes(b"\x7fELF..!")  # same size, other bytes
    elif tamper == "added":
        (Path(w.own) / "memo").write_bytes(b"planted")
    else:
        os.unlink(w.seal_path)
    again = _tier(tmp_path)
    assert "dropped" in again.evidence and again.evidence["sealed_files"] == 0, again.evidence
    assert os.listdir(again.path) == [] and not os.path.exists(w.own)
    again.close()


def test_quota_counts_apparent_size_and_stops_promotion(tmp_path):
    w = _tier(tmp_path, quota=1 << 20)
    _build(w)
    with open(Path(w.path) / ENTRY / "big.o", "wb") as f:
        f.truncate(4 << 20)  # sparse: no block written, still over
    with pytest.raises(tiers.TierQuotaExceeded, match="build tier quota: .* the quota is 1048576 bytes"):
        w.promote("build worker")
    assert not os.path.exists(w.own)  # nothing kept
    w.close()


def test_remove_tree_deletes_what_a_worker_made_unreadable(tmp_path):
    d = tmp_path / "scratch"
    (d / "a" / "b").mkdir(parents=True)
    (d / "a" / "b" / "f").write_text("x")
    os.chmod(d / "a" / "b", 0)
    os.chmod(d / "a", 0)
    tiers.remove_tree(d)
    assert not d.exists()
