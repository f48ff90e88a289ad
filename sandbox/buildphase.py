"""Builds apart from judging (issue "Isolation", item 2).

A candidate with C++/CUDA extension sources is first imported by a separate jailed build worker
(``sandbox/prebuild.py``: the compilers run there, writing only the candidate's own tier of the
build cache). The judging worker then mounts that tier read-only and is sealed (no exec, seccomp)
before it imports the candidate: it only loads finished builds and can start no process.

CUDA sources are built the same way, by a build worker without a GPU, for this machine's GPU
arch (sandbox/session.py: ``cuda_build``). One case keeps the earlier order (the judging worker
imports with its build dir writable and is sealed after the warm-up calls), recorded as
``evidence.build_apart = "late"`` with the reason: sources that compile at their first call
(Triton, cupy, numba, ``torch.compile``), whose compilers run in the warm-up, inside the judging
worker. ``KH_BUILD_APART=cpu`` in the parent's environment keeps CUDA judgements in the late
order too (an operator's switch, e.g. for a GPU stack where the sealed order fails).

The markers are read from the source: a candidate that hides its extension build from them is
judged sealed and its build fails in the judging worker (a compile or runtime error, its own).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from sandbox.errors import Reject
from sandbox.verdict import Status

if TYPE_CHECKING:
    from sandbox.judge import Judge

NATIVE_BUILD = re.compile(r"\bload_inline\b|\bcpp_extension\b|\bRawKernel\b|\bRawModule\b|\bnvrtc\b|\bcompile_with_cache\b")
JIT_AT_CALL = re.compile(r"\btriton\b|\bcupy\b|\bnumba\b|\bcompile\s*\(|\btilelang\b|\bjax\b")


def plan(source: str, device: str) -> tuple[str, str]:
    """("sealed" | "late", why)."""
    if device.startswith("cuda") and os.environ.get("KH_BUILD_APART", "all") == "cpu":
        return "late", "CUDA: KH_BUILD_APART=cpu (the operator kept CUDA judgements in the late order)"
    if JIT_AT_CALL.search(source):
        return "late", "the source compiles at its first call (Triton, cupy, numba or torch.compile)"
    return "sealed", "built by a separate build worker; the judging worker loads it read-only, sealed"


def build(j: Judge) -> bool:
    """Run the build worker when the source has extension sources. True when the judging worker
    may go sealed; False when the build worker could not finish (the judging worker then imports
    the candidate itself, as before, and reports what fails). A compile error is the verdict."""
    if not NATIVE_BUILD.search(j.source):
        return True
    from sandbox.prebuild import prebuild

    res = prebuild(j.task, j.source, j.cfg)
    j.v.durations_s["build"] = round(res.wall_s, 3)
    j.v.durations_s["compile"] = round(res.compile_s, 3)
    j.v.evidence["build"] = {"builds": res.builds, "cache_hits": res.cache_hits, **res.extra}
    if res.outcome == "compile_error":
        raise Reject(Status.COMPILE_ERROR, None, res.message,  # the same verdict the judging worker would give
                     log=res.verdict.logs if res.verdict is not None else res.message)
    if res.outcome != "built":
        j.v.evidence["build_worker"] = res.message[:300]
    return res.outcome == "built"
