"""Fill a real results store with realistic runs through the store API (test fixtures).

Three entries over five ops: EvoEngineer-Full with an online LLM on a GPU (two seeds),
best-of-N with the offline model on the CPU (host timers), FunSearch with another LLM on a
GPU. Verdicts cover every status, final verdicts carry speedups with CIs and
significance, one op of each entry has no valid kernel, one best kernel fails its final
evaluation.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from harness.store import Results, RunSpec
from harness.store.db import utcnow
from sandbox.verdict import Measurement, Mode, Speedup, Status, Trial, Verdict

OPS = ["relu", "softmax", "sum_dim", "matmul_square", "layer_norm"]
GPU_ENV = {
    "gpu": "NVIDIA H200",
    "driver": "560.35",
    "cuda": "12.6",
    "torch": "2.6.0",
    "platform": "Linux",
}
CPU_ENV = {"machine": "x86_64", "torch": "2.13.0+cpu", "platform": "Linux"}

ENTRIES = [
    # method, variant, llm, device, seeds, skill (log-mean speedup), validity
    ("evoengineer", "full", "openai:gpt-4.1", "cuda", [0, 1], 0.9, 0.7),
    ("best-of-n", None, "offline", "cpu", [0], 0.2, 0.5),
    ("funsearch", None, "deepseek-chat@https://api.deepseek.com/v1", "cuda", [0], 0.4, 0.4),
]

SOURCE = '''import torch
from torch.utils.cpp_extension import load_inline

SRC = r"""
__global__ void k_{op}(const float* x, float* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;  // trial {trial}
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}}
"""


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return _ext.run(x)  # {method} {op} {trial}
'''

BAD = [
    (Status.COMPILE_ERROR, None),
    (Status.INCORRECT, None),
    (Status.REJECTED, "stale-memory"),
    (Status.RUNTIME_ERROR, None),
]


def _meas(median: float, n: int = 200) -> Measurement:
    return Measurement(median, median * 0.98, median * 1.02, n, True)


def _verdict(op: str, mode: Mode, device: str, rng: random.Random, skill: float) -> Verdict:
    eager_us = rng.uniform(20, 400)
    sp = max(0.3, rng.lognormvariate(skill, 0.6))
    cand_us = eager_us / sp
    comp_us = eager_us / rng.uniform(1.0, 1.6)
    speedups = {}
    for base, base_us in (("eager", eager_us), ("compile", comp_us)):
        v = base_us / cand_us
        half = v * rng.uniform(0.02, 0.2)
        speedups[base] = Speedup(
            base, v, v - half, v + half, 0.001 if v - half > 1 else 0.4, v - half > 1
        )
    host = device == "cpu"
    return Verdict(
        status=Status.VALID,
        mode=mode,
        device=device,
        task=op,
        trials=[Trial(i, "default", True, 1e-6, 1e-6) for i in range(5)],
        timings={"candidate": _meas(cand_us), "eager": _meas(eager_us), "compile": _meas(comp_us)},
        speedups=speedups if mode is Mode.FINAL else {"eager": speedups["eager"]},
        speed_of_light={"pct_memory": round(rng.uniform(5, 90), 1)} if not host else {},
        host_timers=host,
        environment=CPU_ENV if host else GPU_ENV,
    )


def fill(results_dir: str | Path, *, ops: list[str] = OPS) -> Results:
    """Fill ``results_dir`` with the three entries; returns the open store."""
    repo = Results.open(results_dir)
    for method, variant, llm, device, seeds, skill, validity in ENTRIES:
        for seed in seeds:
            rng = random.Random(f"{method}-{seed}")
            run = repo.create_run(
                RunSpec(
                    method=method,
                    variant=variant,
                    llm=llm,
                    budget={"evaluations": 6},
                    seed=seed,
                    device=device,
                    suite="smoke",
                    config={"population": 5},
                    environment=CPU_ENV if device == "cpu" else GPU_ENV,
                    git_commit="0123abc",
                    run_id=f"{method}-s{seed}",
                )
            )
            for k, op in enumerate(ops):
                _fill_op(
                    repo,
                    run.run_id,
                    op,
                    method,
                    device,
                    rng,
                    skill,
                    validity if k != 1 else 0.0,
                    final_fails=(k == 2 and seed == 0),
                    llm=llm,
                )
            repo.finish_run(run.run_id)
    return repo


def _fill_op(repo, run_id, op, method, device, rng, skill, validity, final_fails, llm):
    repo.ensure_op(run_id, op, f"sha-{op}")
    repo.start_op(run_id, op)
    best = None
    n = 6
    for trial in range(n):
        src = SOURCE.format(op=op, trial=trial, method=method)
        call_id = _llm_call(repo, run_id, method, op, trial, llm, rng)
        cid = repo.add_candidate(
            run_id,
            op,
            trial=trial,
            source=src,
            name=f"{op}_v{trial}",
            thought=f"vectorise loads (trial {trial})",
            operator="mutation" if trial else "init",
            parent_ids=[best[0]] if best else [],
            llm_call_ids=[call_id] if call_id else [],
        )
        if rng.random() < validity:
            v = _verdict(op, Mode.FEEDBACK, device, rng, skill)
            if best is None or v.speedups["eager"].value > best[1]:
                best = (cid, v.speedups["eager"].value)
        else:
            status, rule = BAD[trial % len(BAD)]
            v = Verdict(
                status=status,
                rule=rule,
                task=op,
                device=device,
                message=f"{status.value}",
                host_timers=device == "cpu",
            )
        repo.add_verdict(v, candidate_id=cid, config_key="fb")
    final_id = None
    if best is not None:
        if final_fails:
            fv = Verdict(
                status=Status.INCORRECT,
                mode=Mode.FINAL,
                task=op,
                device=device,
                message="extra0 shape: max abs err 3.1",
                host_timers=device == "cpu",
            )
        else:
            fv = _verdict(op, Mode.FINAL, device, rng, skill)
        final_id = repo.add_verdict(fv, candidate_id=best[0], config_key="final")
    usage = {
        "evaluations": n,
        "llm_calls": n if llm != "offline" else n,
        "wall_s": 12.5,
        "prompt_tokens": 900 * n,
        "completion_tokens": 400 * n,
        "cost_usd": 0.0 if llm == "offline" else round(0.004 * n, 4),
    }
    repo.finish_op(
        run_id,
        op,
        best_candidate_id=best[0] if best else None,
        final_verdict_id=final_id,
        usage=usage,
    )


def _llm_call(repo, run_id, method, op, trial, llm, rng):
    with repo.store.tx() as c:
        cur = c.execute(
            "INSERT INTO llm_calls (run_id, method, op, trial, model, request_json, request_sha256, "
            "response_text, prompt_tokens, completion_tokens, latency_s, offline, created_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                run_id,
                method,
                op,
                trial,
                llm,
                json.dumps({"messages": []}),
                f"{run_id}{op}{trial}",
                "ok",
                900,
                400,
                rng.uniform(1, 5),
                int(llm == "offline"),
                utcnow(),
            ),
        )
        return cur.lastrowid
