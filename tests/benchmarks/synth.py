"""A synthetic results store for the overhead benchmarks, written through harness.store's API:
``methods`` runs x ``ops`` ops x ``trials`` feedback verdicts, plus a final verdict per op."""

from __future__ import annotations

import random
from pathlib import Path

from harness.store import Results, RunSpec
from sandbox.verdict import Measurement, Mode, Speedup, Status, Trial, Verdict

GPU_ENV = {"gpu": "NVIDIA H200", "cuda": "13.0", "torch": "2.11.0", "platform": "Linux"}
BAD = [Status.COMPILE_ERROR, Status.INCORRECT, Status.RUNTIME_ERROR, Status.REJECTED]


def valid_verdict(op: str, mode: Mode, rng: random.Random, samples: int = 0) -> Verdict:
    eager = rng.uniform(20, 400)
    sp = max(0.3, rng.lognormvariate(0.3, 0.6))
    cand = eager / sp

    def meas(m: float) -> Measurement:
        return Measurement(m, m * 0.98, m * 1.02, 200, True,
                           samples_us=[m * rng.uniform(0.97, 1.03) for _ in range(samples)])

    speedups = {b: Speedup(b, sp, sp * 0.95, sp * 1.05, 0.01, sp * 0.95 > 1) for b in ("eager", "compile")}
    return Verdict(status=Status.VALID, mode=mode, device="cuda", task=op,
                   trials=[Trial(i, "default", True, 1e-6, 1e-6) for i in range(5)],
                   timings={"candidate": meas(cand), "eager": meas(eager), "compile": meas(eager / 1.2)},
                   speedups=speedups if mode is Mode.FINAL else {"eager": speedups["eager"]},
                   environment=GPU_ENV, durations_s={"compile": 45.0, "total": 52.0})


def fill_synthetic(d: str | Path, methods: int = 10, ops: int = 91, trials: int = 10) -> Results:
    repo = Results.open(d)
    for m in range(methods):
        rng = random.Random(m)
        run = repo.create_run(RunSpec(method=f"method{m}", llm="openai:gpt-4.1", budget={"evaluations": trials},
                                      seed=0, device="cuda", suite="full", environment=GPU_ENV,
                                      run_id=f"method{m}-s0"))
        for k in range(ops):
            op = f"op{k:03d}"
            repo.ensure_op(run.run_id, op, f"sha-{op}")
            repo.start_op(run.run_id, op)
            best = None
            for t in range(trials):
                cid = repo.add_candidate(run.run_id, op, trial=t, source=f"# {m} {op} {t}\nclass ModelNew: pass\n")
                if rng.random() < 0.6:
                    v = valid_verdict(op, Mode.FEEDBACK, rng)
                    if best is None or v.speedups["eager"].value > best[1]:
                        best = (cid, v.speedups["eager"].value)
                else:
                    v = Verdict(status=BAD[t % 4], task=op, device="cuda", message="synthetic")
                repo.add_verdict(v, candidate_id=cid, config_key="fb")
            final_id = None
            if best is not None:
                final_id = repo.add_verdict(valid_verdict(op, Mode.FINAL, rng), candidate_id=best[0],
                                            config_key="final")
            repo.finish_op(run.run_id, op, best_candidate_id=best[0] if best else None,
                           final_verdict_id=final_id, usage={"evaluations": trials})
        repo.finish_run(run.run_id)
    return repo
