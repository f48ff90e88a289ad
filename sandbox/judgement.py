"""One judgement from the outside (``judge``, which ``evaluate()`` ends in): the trusted helpers
ensured before its clock starts (the op counter, the one-kernel compare, the precompiled headers),
the phases of sandbox/judge.py's ``Judge`` run and its workers closed, the reference run alone
where it failed (sandbox/check/attribution.py), the GPU memory given back whatever ended it
(sandbox/lane/gpumem.py), and the verdict's last fields: tolerance evidence, total time, no
speedup for a kernel that is not valid.
"""

from __future__ import annotations

import time

from sandbox.build import buildcache, pch
from sandbox.check import fusedcompare, outcome
from sandbox.check.attribution import attribute
from sandbox.config import EvalConfig
from sandbox.intake.task import Task
from sandbox.judge import Judge
from sandbox.rules import opcount
from sandbox.verdict import Status, Verdict, tolerance_evidence
from sandbox.worker.judgeenv import cache_root


def _run_and_close(j: Judge) -> None:
    ref_failure: str | None = None
    try:
        try:
            j.run()
        except outcome.ENDINGS as e:
            ref_failure = outcome.record(j, e)
    finally:
        try:
            j.close()
        finally:
            j.v.evidence["first_calls"] = j.first_calls.evidence()
            if j.tier is not None:  # nothing the candidate wrote into it outlives the judgement
                j.v.evidence["build_tier"] = j.tier.evidence
                j.tier.close()
    if ref_failure is not None:  # the candidate's workers are gone: now the reference runs alone
        attribute(j, ref_failure)


def judge(task: Task, source: str, config: EvalConfig) -> Verdict:
    trusted = buildcache.layout(cache_root(config), source)[2]
    path, why_not = opcount.ensure(trusted)  # before the judgement's clock starts; no worker writes there
    fused, fused_why = fusedcompare.ensure(trusted) if fusedcompare.wanted(config.device) else (None, None)
    headers = pch.prepare(source)  # the precompiled headers its C++ builds can use (KH_BUILD_PCH), as well
    j = Judge(task, source, config)
    j.opcount_path = path
    if why_not:
        j.v.evidence["opcount"] = why_not
    if fused:  # the reference worker's one-kernel float pass (sandbox/check/fusedcompare.py)
        j.fused_src = (fused, fusedcompare.file_sha256(fused))
    elif fused_why:
        j.v.evidence["compare_fused"] = {"outputs": 0, "error": fused_why}
    if headers.get("built_s") or headers.get("not_built"):
        j.v.evidence["pch"] = headers
    try:
        _run_and_close(j)
    finally:  # whatever ended it: the judgement's GPU memory is given back (sandbox/lane/gpumem.py)
        j.gpu_mem.release()
    if j.gpu_mem.evidence.get("units") is not None:
        j.v.evidence["gpu_memory"] = j.gpu_mem.evidence
    j.v.tolerance = tolerance_evidence(j.v.trials, j.atol, j.rtol)  # also, most usefully, when incorrect
    j.v.durations_s["total"] = round(time.monotonic() - j.t0, 3)
    if j.v.status is not Status.VALID:  # no speedup is reported for a kernel that is not valid
        j.v.timings, j.v.speedups = {}, {}
    return j.v

