"""The precompiled headers' folder is bounded (sandbox/build/pch.py): a header is not begun without
room on its disk, the least recently used beyond KH_PCH_KEEP are deleted (never one being built),
and a failure of the machine's (a full disk, a killed compiler) is not remembered as the header's.
A CI run filled its disk with 0.8 GiB headers, and the full disk's error was then kept as the
header's own, so no later build on that machine had it. No compiler runs here."""

from __future__ import annotations

import fcntl
import os
import time

import pytest

from sandbox.build import pch

FULL = ("the compiler failed (1): pch-source.h:1: python.h:260:1: fatal error: cannot write PCH file: "
        "No space left on device\ncompilation terminated.")
ITS_OWN = "the compiler failed (1): extension.h:3:1: error: expected ';' before 'namespace'"


@pytest.mark.parametrize("rc, err, machine", [
    (1, FULL, True),
    (-9, "", True),  # the OOM killer, a stop
    (1, "cc1plus: out of memory allocating 65536 bytes", True),
    (1, "g++: fatal error: Killed signal terminated program cc1plus", True),
    (1, ITS_OWN, False),
    (1, "", False),
])
def test_a_failure_of_the_machine_is_told_from_the_headers_own(rc, err, machine):
    assert pch.of_the_machine(rc, err) is machine


def test_a_header_is_not_begun_without_room_and_a_full_disk_is_not_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("KH_PCH_MIN_FREE_GIB", "1e9")  # more than any disk: no room
    f = pch.folder(tmp_path, ())
    f.mkdir(parents=True)
    (f / "failed").write_text(FULL + "\n")  # what an older harness kept of a full disk
    took, why = pch.ensure((), tmp_path)
    assert took == 0.0 and why.startswith("only ") and "GiB free under" in why and "KH_PCH_MIN_FREE_GIB" in why, why
    assert not (f / "failed").exists() and not (f / "ok").exists()  # forgotten, and nothing begun
    assert not list(f.rglob("*.gch*"))
    (f / "failed").write_text(ITS_OWN + "\n")  # the header's own error stays remembered
    assert pch.ensure((), tmp_path) == (0.0, ITS_OWN)
    monkeypatch.setenv("KH_PCH_MIN_FREE_GIB", "two")
    with pytest.raises(ValueError, match="KH_PCH_MIN_FREE_GIB='two' is not a number"):
        pch.min_free_bytes()


def test_the_least_recently_used_headers_go_but_never_the_new_one_nor_one_being_built(tmp_path, monkeypatch):
    now = time.time()
    names = [f"{k:024x}" for k in range(8)]  # header folders, 0 used last
    for age, name in enumerate(names):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ok").write_text("{}\n")
        os.utime(tmp_path / name / "ok", (now - 60 * age, now - 60 * age))
    (tmp_path / "not-a-header").mkdir()
    newest, building = names[5], names[7]  # just built (keep); another process builds the oldest
    with open(tmp_path / f"{building}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        gone = pch.prune(tmp_path, keep=newest, count=3)
    assert sorted(gone) == sorted(names[2:5] + [names[6]])
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == sorted([*names[:2], newest, building, "not-a-header"])
    monkeypatch.setenv("KH_PCH_KEEP", "0")
    with pytest.raises(ValueError, match="KH_PCH_KEEP='0'.*at least 1"):
        pch.keep_count()
