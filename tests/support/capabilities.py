"""Skip markers for tests that need a capability of the machine, each with the reason at the
test's top. CI provides every one of them (scripts/setup.sh --system; tests/support/skips.py
lists the reasons CI may skip for, and these are not among them).

    needs_isolation   the process jail (user, mount, PID and network namespaces, seccomp)
    needs_seccomp     the worker's seccomp filter can be installed on this kernel and arch
"""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def isolation_why_not() -> str | None:
    """None when the jail works here, else why not (sandbox/isolation/process.probe)."""
    from sandbox.isolation.process import probe

    p = probe()
    return None if p.mode != "none" else (p.why_not or "no isolation mode works")


def seccomp_why_not() -> str | None:
    from sandbox.isolation import seccomp

    return None if seccomp.SUPPORTED and seccomp.available() else seccomp.describe()


needs_isolation = pytest.mark.skipif(isolation_why_not() is not None,
                                     reason=f"no process isolation here: {isolation_why_not()}")
needs_seccomp = pytest.mark.skipif(seccomp_why_not() is not None, reason=f"no seccomp here: {seccomp_why_not()}")
