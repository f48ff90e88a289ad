"""A stopped run does not wait for a precompiled header (sandbox/build/pch.py: ``abandon``).

``harness run`` stopped by SIGINT or SIGTERM closes its executor, which waits for the builds in
flight. A build's first step may be the torch header of its flags, 75 s on this box and more
under load: Ctrl-C then took that long, and CI's interrupt test ran past its 120 s (session 23).
Here a real header build (the compiler on torch's header, in a fresh folder) is abandoned 2 s in:
it must end within seconds, with its compiler gone and nothing of the header kept, and a second
caller waiting for the same header's lock must give up too."""

from __future__ import annotations

import threading
import time

from sandbox.build import pch
from tests.support.procs import running_in


def test_an_abandoned_header_build_ends_at_once_and_keeps_nothing(tmp_path):
    got: dict[str, tuple[float, str]] = {}

    def build(name: str) -> None:
        got[name] = pch.ensure((), root=tmp_path)

    first = threading.Thread(target=build, args=("builder",))
    first.start()
    time.sleep(0.5)
    second = threading.Thread(target=build, args=("waiter",))  # waits on the header's lock
    second.start()
    time.sleep(1.5)
    assert first.is_alive(), got  # the header takes far longer than 2 s to build
    t = time.monotonic()
    pch.abandon()
    try:
        first.join(10)
        second.join(10)
        took = time.monotonic() - t
        assert not first.is_alive() and not second.is_alive()
        assert took < 5, took
        assert got["builder"][1] == pch.STOPPED and got["waiter"][1] == pch.STOPPED, got
        f = pch.folder(tmp_path, ())
        assert not (f / "ok").exists() and not (f / "failed").exists()
        time.sleep(1)  # a compiler left running would go on writing its temp file
        assert not list(f.rglob("*.gch*")), list(f.rglob("*"))  # no header, no half-written temp file
        assert not running_in(tmp_path), running_in(tmp_path)  # the compiler (driver and cc1plus) is gone
        t = time.monotonic()
        assert pch.ensure((), root=tmp_path) == (0.0, pch.STOPPED)  # none begun while abandoned
        assert time.monotonic() - t < 1
    finally:
        pch.reset()
    assert not pch.abandoned()
