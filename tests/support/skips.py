"""The documented skip reasons, and the CI skip policy.

A test that needs a capability skips at its top, saying which capability is missing. CI
(``.ci/run``: ``scripts/setup.sh --system`` first) provides every capability the project claims:
process isolation (user, mount, PID and network namespaces, seccomp), bubblewrap, podman (a
Docker-API engine), headless Chromium with Playwright, Ray. What CI cannot provide is listed
here, each with why; with ``KH_CI_SKIP_POLICY=1`` (set by ``.ci/run``) a skip whose reason
matches none of them fails the run (tests/conftest.py), so a capability CI lost shows up as a
failure, not as a quietly smaller suite.
"""

from __future__ import annotations

import re

# (pattern matched at the start of the skip reason, why CI cannot run it)
ALLOWED: list[tuple[str, str]] = [
    (r"needs a CUDA GPU", "CI has no GPU: gpu-marked tests run on the lent GPU (python harness/bench/tools/gpu_tests.py), "
                          "recorded under docs/records/gpu-runs/"),
    (r"benchmark: ", "benchmarks run with nox -s bench (KH_BENCH=1); CI keeps its time for tests"),
    (r"the kernel has no Landlock", "a kernel feature (CONFIG_SECURITY_LANDLOCK, lsm=landlock): no package provides it"),
    (r"x32 exists on x86_64 only", "an architecture, not a package"),
    (r"disk: ", "the machine's free disk is below what a precompiled header (0.8 GiB) is begun with "
                "(sandbox/build/pch.py, KH_PCH_MIN_FREE_GIB): the machine's, and said with how much was free"),
]
POLICY_ENV = "KH_CI_SKIP_POLICY"


def allowed(reason: str) -> bool:
    reason = reason.removeprefix("Skipped: ").strip()
    return any(re.match(p, reason) for p, _ in ALLOWED)


def reason_of(report) -> str:
    """The reason of a skipped test report (pytest keeps (path, line, reason) in longrepr)."""
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2]).removeprefix("Skipped: ").strip()
    return str(lr).strip()
