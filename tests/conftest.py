"""Root fixtures of the test suite, and the CI skip policy.

Fixtures (the helpers behind them live in tests/support/ and may be imported directly where a
module-level constant needs them):

    fast_config        the factory of the one fast-but-complete CPU EvalConfig (tests/support/evalconfig.py)
    judge              judge(task, source, **kw): the real evaluator with that config (tests/support/judging.py)
    cli                cli(*args): the harness CLI in this process, click's CliRunner (tests/support/cli.py)
    offline_relu_run   one offline ``harness run`` over relu per session, real evaluator (read-only for tests)

Skip policy: with KH_CI_SKIP_POLICY=1 (.ci/run sets it), a skip whose reason is not in
tests/support/skips.py's documented list fails the run, and the skip reasons are printed grouped
at the end (tests/support/skips.py says why each listed reason is allowed).
"""

from __future__ import annotations

import collections
import os
import signal

import pytest

from tests.support import skips

_SKIPS: list[tuple[str, str]] = []  # (node id, reason) of every skipped test of this session


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into node ids
def pytest_collection_modifyitems(config, items):
    """Under ``--dist loadgroup``: files with costly shared fixtures run whole on one worker
    (tests/support/groups.py)."""
    from tests.support.groups import add_groups

    add_groups(config, items)


def pytest_configure(config):
    """SIGINT as a terminal delivers it, whatever started pytest. A shell starts a background job
    (``cmd &``, as a CI runner or nohup may) with SIGINT ignored, and an ignored signal stays ignored
    across exec: the Ctrl-C tests (tests/runner/test_interrupt.py, test_demo_script.py,
    test_runner.py's --jobs case) would then signal children that cannot hear it. A handled signal
    is reset to the default at exec, so every child starts with SIGINT live."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    _precompiled_headers()


def _precompiled_headers() -> None:
    """Judge as ``harness run`` does: C++ builds given the precompiled torch/extension.h of their
    flags (sandbox/build/pch.py, KH_BUILD_PCH=1, which every executor sets), about half of a CPU
    build. Each header is built once per machine, by the first judgement that can use it, into one
    folder for the session (KH_PCH_DIR), whatever cache a test gives its processes. A test of the
    stock build unsets KH_BUILD_PCH (tests/conformance/test_compile_cuts.py)."""
    os.environ.setdefault("KH_BUILD_PCH", "1")
    from sandbox.build import pch

    os.environ.setdefault("KH_PCH_DIR", str(pch.home()))


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPS.append((report.nodeid, skips.reason_of(report)))


def pytest_collectreport(report):
    """A whole module skipped while collected (a module-level pytest.importorskip or skip)."""
    if report.skipped:
        _SKIPS.append((report.nodeid, skips.reason_of(report)))


def _undocumented() -> list[tuple[str, str]]:
    return [(n, r) for n, r in _SKIPS if not skips.allowed(r)]


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get(skips.POLICY_ENV) == "1" and _undocumented() and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if os.environ.get(skips.POLICY_ENV) != "1":
        return
    tr = terminalreporter
    tr.section("skip policy (tests/support/skips.py)")
    by_reason = collections.Counter(r for _, r in _SKIPS)
    for reason, n in by_reason.most_common():
        tr.write_line(f"{n:5d}  {'ok  ' if skips.allowed(reason) else 'BAD '} {reason}")
    bad = _undocumented()
    if bad:
        tr.write_line(f"FAILED: {len(bad)} skip(s) with a reason outside the documented list; CI must provide "
                      "the capability, or the reason must be added to tests/support/skips.py with why:", red=True)
        for node, reason in bad[:50]:
            tr.write_line(f"  {node}: {reason}", red=True)
    else:
        tr.write_line(f"{len(_SKIPS)} skipped, every reason documented")


# -- fixtures ----------------------------------------------------------------------------------
@pytest.fixture
def fast_config():
    from tests.support.evalconfig import fast_config

    return fast_config


@pytest.fixture
def judge():
    from tests.support.judging import judge

    return judge


@pytest.fixture
def cli():
    from tests.support.cli import invoke

    return invoke


@pytest.fixture(scope="session")
def offline_relu_run(tmp_path_factory):
    """tests/support/offline_run.py: one offline ``harness run`` over relu, real evaluator, per
    session. Read-only for the tests that use it."""
    from tests.support.offline_run import run_offline_relu

    return run_offline_relu(tmp_path_factory.mktemp("offline-relu-run"))
