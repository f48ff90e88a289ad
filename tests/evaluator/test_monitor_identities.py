"""The monitors' identity snapshot covers the worker's call path wherever it lives: methods a
candidate sets on Worker or on its base CallPath, and the clock aliases of sandbox/worker/callpath.py
(red-team cheat 07c patches the worker's own methods; the split of the call path out of
worker.py must not open a way around that)."""

from __future__ import annotations

import pytest

from sandbox.rules import monitors
from sandbox.worker import callpath
from sandbox.worker import main as worker


def changed_after(patch) -> list[str]:
    before = monitors.timing_identities(vars(worker))
    undo = patch()
    try:
        now = monitors.timing_identities(vars(worker))
    finally:
        undo()
    assert monitors.timing_identities(vars(worker)) == before  # restored
    return sorted(k for k, v in before.items() if now.get(k) is not v)


def _set(obj, name, value):
    old = obj.__dict__.get(name, _MISSING)

    def undo():
        if old is _MISSING:
            delattr(obj, name)
        else:
            setattr(obj, name, old)

    setattr(obj, name, value)
    return undo


_MISSING = object()


def test_method_replaced_on_the_base_class_is_seen():
    got = changed_after(lambda: _set(callpath.CallPath, "_flush", lambda self: None))
    assert "worker.Worker._flush" in got and "worker.CallPath._flush" in got, got


def test_method_shadowed_on_the_subclass_is_seen():
    got = changed_after(lambda: _set(worker.Worker, "go", lambda self, req, profiler=None: {"ok": True, "ns": 1}))
    assert got == ["worker.Worker.go"], got


@pytest.mark.parametrize("name", ["_perf_ns", "_ttime_ns", "_listdir"])
def test_clock_alias_of_the_call_path_is_seen(name):
    got = changed_after(lambda: _set(callpath, name, lambda *a: 0))
    assert f"sandbox.worker.callpath.{name}" in got, got
