"""A Ctrl-C reaches a judgement waiting for its build thread even when the kernel handed the
signal to that thread (sandbox/build/buildphase.py ``join_seeing_signals``): in CI on 2026-11-28 a
stopped demo run waited 600 s in an untimed join while its build thread, which had the SIGINT, was
blocked. Real threads and a real SIGINT, sent to the build thread only (``pthread_kill``)."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from sandbox.build import buildphase


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="needs the main thread")
def test_a_sigint_taken_by_the_build_thread_interrupts_the_wait_for_it():
    release = threading.Event()
    th = threading.Thread(target=release.wait, name="build", daemon=True)  # a build that does not end
    th.start()
    killer = threading.Timer(0.3, lambda: signal.pthread_kill(th.ident, signal.SIGINT))
    killer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            buildphase.join_seeing_signals(th, step_s=0.1)
        assert time.monotonic() - t0 < 5.0
    finally:
        killer.cancel()
        release.set()
        th.join(5)


def test_it_returns_when_the_thread_ends():
    th = threading.Thread(target=time.sleep, args=(0.3,))
    th.start()
    buildphase.join_seeing_signals(th, step_s=0.05)
    assert not th.is_alive()
