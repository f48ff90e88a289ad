"""Isolation of the candidate worker (process backend): each misbehaviour costs one verdict,
never the caller, and leaves nothing running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox import rules
from sandbox.verdict import Status
from tests.evaluator.conftest import python_candidate, run

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Scratch dirs of this test's workers live under a unique dir: their argv names it, so
    other evaluations running on the machine at the same time are not counted."""
    import tempfile

    d = tmp_path / "kh-private"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return str(d)


def _worker_pids(marker: str) -> set[int]:
    pids = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                cmd = Path(f"/proc/{d}/cmdline").read_bytes()
            except OSError:
                continue
            if b"sandbox.worker" in cmd and marker.encode() in cmd:
                pids.add(int(d))
    return pids


def test_network_is_blocked_at_import():
    # computed module name: gets past the static scan, so the runtime layers are what is tested
    prelude = ("s = __import__('so' + 'cket')\n"
               "try:\n    s.create_connection(('1.1.1.1', 80), timeout=3)\nexcept OSError:\n    pass\n")
    v = run(python_candidate("        return a + b", prelude), allow_torch_ops=True)
    assert v.status is Status.REJECTED and v.rule == rules.NETWORK, v.message


def test_write_outside_scratch_is_blocked(tmp_path):
    target = REPO / "pwned_by_candidate.txt"
    prelude = f"try:\n    open({str(target)!r}, 'w').write('x')\nexcept OSError:\n    pass\n"
    v = run(python_candidate("        return a + b", prelude), allow_torch_ops=True)
    assert v.status is Status.REJECTED and v.rule == rules.FILESYSTEM, v.message
    assert not target.exists()


def test_hang_times_out_and_kills_the_group(private_tmp):
    t0 = time.monotonic()
    v = run(python_candidate("        while True:\n            pass"), allow_torch_ops=True, timeout_s=60,
            first_call_timeout_s=15.0)  # the loop is its first call: that budget ends it, well inside 60 s
    assert v.status is Status.TIMEOUT and v.rule == rules.TIMEOUT
    assert time.monotonic() - t0 < 90
    time.sleep(1)
    assert not _worker_pids(private_tmp)


def test_fork_bomb_in_the_sealed_order_starts_no_process(private_tmp):
    """The sealed order (sandbox/build/buildphase.py): the seal refuses new processes before import."""
    v = run(python_candidate("        return a + b", FORK_BOMB), allow_torch_ops=True, timeout_s=200)
    assert v.status is Status.RUNTIME_ERROR, (v.status, v.rule, v.message)
    assert "Operation not permitted" in v.logs or "PermissionError" in v.logs, v.logs[-2000:]
    assert not _worker_pids(private_tmp)


def test_segfault_is_a_runtime_error():
    body = "        os.kill(os.getpid(), 11)\n        return a + b"
    v = run(python_candidate(body), allow_torch_ops=True)
    assert v.status is Status.RUNTIME_ERROR and "SIGSEGV" in v.message, v.message


def test_os_exit_is_a_runtime_error():
    v = run(python_candidate("        os._exit(0)"), allow_torch_ops=True)
    assert v.status is Status.RUNTIME_ERROR and "died" in v.message, v.message


# bounded (600 sleeping children) so a broken watchdog cannot take the test machine down
FORK_BOMB = ("_fork = getattr(os, 'fo' + 'rk')\n"
             "for _ in range(600):\n"
             "    if _fork() == 0:\n        time.sleep(120)\n        os._exit(0)\n"
             "time.sleep(120)\n")


def test_fork_bomb_is_killed_by_the_process_watchdog(private_tmp, monkeypatch):
    """The late order (the candidate imports before the seal, as Triton sources do): the
    processes start, and the watchdog ends the judgement."""
    from sandbox.build import buildphase

    monkeypatch.setattr(buildphase, "plan", lambda source, device: ("late", "forced by the test"))
    v = run(python_candidate("        return a + b", FORK_BOMB), allow_torch_ops=True, timeout_s=200)
    assert v.status is Status.REJECTED and v.rule == rules.RESOURCES, v.message
    time.sleep(1)
    assert not _worker_pids(private_tmp)
    assert not _sleepers(private_tmp)


def test_memory_bomb_costs_one_verdict():
    prelude = "hog = bytearray(1 << 40)\n"  # 1 TiB: above every limit
    v = run(python_candidate("        return a + b", prelude), allow_torch_ops=True)
    assert v.status is Status.REJECTED and v.rule == rules.RESOURCES, v.message


ORPHAN_DRIVER = """
import sys
sys.path.insert(0, {repo!r})
from tests.evaluator.conftest import python_candidate, run
run(python_candidate("        while True:\\n            pass"), allow_torch_ops=True, timeout_s=600)
"""


def _sleepers(marker: str) -> set[int]:
    """Processes whose cwd is under ``marker`` (the forked children of a candidate)."""
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.readlink(f"/proc/{d}/cwd").startswith(marker):
                    out.add(int(d))
            except OSError:
                pass
    return out


def test_killing_the_parent_leaves_no_orphan_workers(private_tmp):
    env = {**os.environ, "TMPDIR": private_tmp}
    p = subprocess.Popen([sys.executable, "-c", ORPHAN_DRIVER.format(repo=str(REPO))], cwd=REPO, env=env)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(_worker_pids(private_tmp)) < 2:
            time.sleep(0.5)
        assert len(_worker_pids(private_tmp)) >= 2, "workers never started"
        time.sleep(3)  # let the candidate reach its hanging forward
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (_worker_pids(private_tmp) or _sleepers(private_tmp)):
        time.sleep(0.5)
    assert not _worker_pids(private_tmp), "worker processes survived their parent"
    assert not _sleepers(private_tmp)


def test_background_workers_run_at_the_lowest_cpu_priority(tmp_path):
    # build workers (sandbox/build/prebuild.py) yield the CPU to judgements: their compilers inherit it
    from sandbox.build.prebuild import BUILD_NICENESS
    from sandbox.isolation import Limits, get_launcher
    from sandbox.isolation.base import WorkerSpec

    def niceness(limits: Limits) -> int:
        log = tmp_path / f"log{limits.niceness}"
        code = ("import os, subprocess; print('self', os.nice(0), 'idle', os.sched_getscheduler(0) == os.SCHED_IDLE);"
                "subprocess.run(['sh', '-c', 'echo child $(nice)'])")
        spec = WorkerSpec(argv=[sys.executable, "-c", code], env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                          cwd=str(tmp_path), scratch=str(tmp_path), limits=limits, log_path=str(log))
        h = get_launcher("process").start(spec)
        assert h.wait(60) == 0, log.read_text()
        text = log.read_text()
        own = int(text.split("self ")[1].split()[0])
        assert f"child {own}" in text, text  # inherited by what the worker starts (the compiler)
        assert ("idle True" in text) == (limits.niceness > 0), text
        return own

    base = os.nice(0)
    assert BUILD_NICENESS >= 10
    assert niceness(Limits(niceness=BUILD_NICENESS)) == min(19, base + BUILD_NICENESS)
    assert niceness(Limits()) == base
