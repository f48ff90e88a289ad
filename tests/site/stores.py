"""Writing results stores for the leaderboard tests through the project's store API, with the
numbers each test states (no method is run): a run, its ops, one candidate per op, the final
kernel's verdicts (one per judging session, stored under ``session_key`` as the runner does).

    repo = Results.open(tmp_path)
    add_run(repo, "r1", budget=2, ops={"relu": [(2.0, 1.9, 2.1)], "softmax": "incorrect"})

An op's value is a list of sessions (value, ci_low, ci_high) of the speedup over eager, a
status string for a final kernel that failed, or None for an op without a valid trial.
"""

from __future__ import annotations

from typing import Any

from harness.store import Results, RunSpec, session_key
from sandbox.verdict import Measurement, Mode, Speedup, Status, Trial, Verdict

GPU_ENV = {"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.1", "cuda": "13.0", "torch": "2.11.0",
           "platform": "Linux"}  # fmt: skip
CPU_ENV = {"machine": "x86_64", "torch": "2.13.0+cpu", "platform": "Linux"}
KEY = "finalkey"
EAGER_US = 100.0

Sessions = list[tuple[float, float, float]]


def kernel_source(run_id: str, op: str) -> str:
    return f"import torch\n\n\nclass ModelNew(torch.nn.Module):  # {run_id} {op}\n    pass\n"


def final_verdict(op: str, value: float, lo: float, hi: float, device: str) -> Verdict:
    """A valid final verdict whose speedup over eager is ``value`` [lo, hi]."""
    host = device == "cpu"
    cand = EAGER_US / value
    return Verdict(
        status=Status.VALID, mode=Mode.FINAL, device=device, task=op, host_timers=host,
        trials=[Trial(0, "default", True, 0.0, 0.0)],
        timings={"candidate": Measurement(cand, cand * 0.99, cand * 1.01, 100, True),
                 "eager": Measurement(EAGER_US, 99.0, 101.0, 100, True)},
        speedups={"eager": Speedup("eager", value, lo, hi, 0.001 if lo > 1 else 0.9, lo > 1)},
        environment=CPU_ENV if host else GPU_ENV,
    )  # fmt: skip


def add_run(
    repo: Results,
    run_id: str,
    *,
    ops: dict[str, Sessions | str | None],
    planned: list[str] | None = None,
    method: str = "evoengineer-free",
    variant: str | None = "free",
    llm: str = "mock-coder@http://127.0.0.1:8001/v1",
    budget: int = 4,
    seed: int = 0,
    device: str = "cuda",
    rules: str = "strict",
    config: dict[str, Any] | None = None,
    suite: str | None = None,
    trials: int = 4,
    sources: dict[str, str] | None = None,
) -> str:
    """One finished run over ``ops`` (a planned op missing from ``ops`` never finished)."""
    planned = planned or list(ops)
    cfg = {"method_options": {}, "ops": planned, "eval_overrides": {},
           "final_sessions": max([len(v) for v in ops.values() if isinstance(v, list)] or [1]),
           **(config or {})}  # fmt: skip
    repo.create_run(RunSpec(
        method=method, variant=variant, llm=llm, budget={"evaluations": budget}, seed=seed,
        device=device, suite=suite or "ops:" + ",".join(planned), config=cfg, rules=rules,
        environment=CPU_ENV if device == "cpu" else GPU_ENV, git_commit="0123abc", run_id=run_id,
    ))  # fmt: skip
    for op, final in ops.items():
        _add_op(repo, run_id, op, final, device, trials, (sources or {}).get(op))
    repo.finish_run(run_id)
    return run_id


def _add_op(repo: Results, run_id: str, op: str, final: Sessions | str | None, device: str,
            trials: int, source: str | None) -> None:
    repo.ensure_op(run_id, op, f"sha-{op}")
    repo.start_op(run_id, op)
    src = source or kernel_source(run_id, op)
    best = None
    for t in range(trials):
        cid = repo.add_candidate(run_id, op, trial=t, source=src if t == 0 else src + f"# {t}\n")
        ok = final is not None and t == 0
        v = (final_verdict(op, 1.5, 1.4, 1.6, device) if ok else
             Verdict(status=Status.COMPILE_ERROR, task=op, device=device, host_timers=device == "cpu"))
        v.mode = Mode.FEEDBACK
        repo.add_verdict(v, candidate_id=cid, config_key="fb")
        best = best or (cid if ok else None)
    final_id = None
    if best is not None:
        if isinstance(final, str):
            fv = Verdict(status=Status(final), mode=Mode.FINAL, task=op, device=device,
                         message=f"{final} on a hidden shape", host_timers=device == "cpu")  # fmt: skip
            final_id = repo.add_verdict(fv, candidate_id=best, config_key=KEY)
        else:
            for i, (value, lo, hi) in enumerate(final or []):
                vid = repo.add_verdict(final_verdict(op, value, lo, hi, device), candidate_id=best,
                                       config_key=session_key(KEY, i))  # fmt: skip
                final_id = final_id or vid
    repo.finish_op(run_id, op, best_candidate_id=best, final_verdict_id=final_id,
                   usage={"evaluations": trials})  # fmt: skip
