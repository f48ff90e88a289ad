"""The named scenarios of the GPU benchmark tool: what each measures and the command it runs
(from the repository root; ``{out}`` is the scenario's output folder)."""

from __future__ import annotations

from dataclasses import dataclass

TOOLS = "harness/bench/tools"


@dataclass(frozen=True)
class Scenario:
    name: str
    measures: str
    argv: tuple[str, ...]  # run from the repository root; "{out}" is replaced by the output folder
    limit_s: int  # killed after this many seconds (a device call runs at most 10 minutes)
    gpus: int = 1
    summary: str = ""  # a file under {out} whose text goes into the record ("" : the output's tail)

    def command(self, out: str, extra: tuple[str, ...] = ()) -> list[str]:
        return [a.replace("{out}", out) for a in self.argv] + list(extra)


def _py(tool: str, *args: str) -> tuple[str, ...]:
    return ("python3", f"{TOOLS}/{tool}", *args)


def _sh(tool: str, *args: str) -> tuple[str, ...]:
    return ("env", "OUT={out}", "bash", f"{TOOLS}/{tool}", *args)


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("integrity", "the GPU red team (each cheat caught with its rule), the honest GPU kernels valid, the "
             "lane tests, honest relu repeats in final mode", _sh("gpu_integrity.sh"), 590,
             summary="summary.txt"),
    Scenario("tests", "the gpu-marked tests no record covers yet, in 4 pytest shards (records under "
             "docs/records/gpu-runs/)", _py("gpu_tests.py", "--missing", "--shards", "4", "--out", "{out}"), 590),
    Scenario("seeds", "every shipped CUDA seed kernel judged like a candidate (final mode, strict)",
             _py("check_seed_kernels.py", "--max-timing-s", "0.5"), 400),
    Scenario("conformance", "the conformance set's CUDA rows against their expected verdicts",
             _py("gpu_conformance.py"), 590),
    Scenario("throughput", "judgements per minute: one at a time against the compile pipeline",
             _py("gpu_throughput.py", "--json", "{out}/throughput.json"), 590),
    Scenario("repeat", "one honest kernel in separate sessions: the spread of its timings (and the timing "
             "lead's control)", _sh("gpu_repeat.sh"), 590, summary="summary.txt"),
    Scenario("held", "how long one op's judgements hold the GPU, judgement after judgement",
             _py("gpu_held.py", "--runs", "3"), 590),
    Scenario("compare", "the tolerance check's float64 pass on 1 and 4 GiB outputs that are not bit-equal: "
             "all-finite pass against the masked one (ms per GiB), same statistics (issue 27, goal 1)",
             _py("gpu_compare.py"), 300),
    Scenario("datapath", "GB/s of a big output's fetch and compare (a 2.5 GiB output)", _py("gpu_datapath.py"), 590),
    Scenario("lane", "a slow or hanging first call beside an honest judgement: how long the honest one waits",
             _py("gpu_lane_check.py"), 590),
    Scenario("baselines", "eager and torch.compile time of every reference op, %SOL",
             _py("gpu_baselines.py", "--out", "{out}", "--deadline-s", "540"), 590),
    Scenario("verify", "do published leaderboard numbers reproduce (an offline run, its site, "
             "`leaderboard verify`)", _sh("gpu_verify.sh"), 590),
    Scenario("methods-slice", "a researcher's run: every method on an op slice with the offline model, seeds side "
             "by side, the leaderboard built", ("env", "OUT={out}", "PACK=1", "bash", f"{TOOLS}/gpu_methods_slice.sh"),
             590, summary="summary.txt"),
    Scenario("two-gpu", "one GPU against two: judgements per minute and identical verdicts",
             _sh("gpu_two.sh"), 590, gpus=2, summary="summary.txt"),
    Scenario("four-gpu", "one GPU against four (the two-gpu scenario's script on every GPU the machine has, "
             "four copies of the set): judgements per minute and identical verdicts (issue 27, goal 3)",
             ("env", "OUT={out}", "COPIES=4", "bash", f"{TOOLS}/gpu_two.sh"), 590, gpus=4, summary="summary.txt"),
    Scenario("scale", "the user's scale: four `harness run` at once (evoengineer-free, -full, funsearch, eoh; --jobs 32 "
             "each over the ops the offline model writes) whose LLM is the offline model behind a loopback gateway "
             "adding 5-30 s a call, on every GPU: judgements "
             "per minute over a 10-minute window, GPU and CPU shares, the 8-GPU projection (issue 27, goal 6). "
             "The run lasts 16 minutes: this call starts it (in its own session) and waits 9 minutes, "
             "scale-wait (the next call, on the same warm machine) waits for its end",
             _py("gpu_scale.py", "start", "--work", "/var/tmp/kh-scale", "--wait-s", "555", "--out", "{out}"), 590,
             gpus=4, summary="summary.txt"),
    Scenario("scale-wait", "the scale scenario's run, started by an earlier call: progress, then its summary",
             _py("gpu_scale.py", "wait", "--work", "/var/tmp/kh-scale", "--for-s", "560", "--out", "{out}"), 590,
             gpus=4, summary="summary.txt"),
    Scenario("ray-cluster", "a Ray cluster on one multi-GPU host, one raylet per GPU group (half the GPUs "
             "each), the build cache shared: judgements per minute of one node against two, identical verdicts "
             "(issue 27, goal 4; Ray from .whl/, scripts/ray_wheel.py)",
             _py("gpu_ray.py", "--out", "{out}", "--budget-s", "540"), 590, gpus=4, summary="summary.txt"),
    Scenario("jail", "the process sandbox on the GPU machine: CUDA, Triton and a build inside the jail",
             _py("jail_smoke.py"), 300),
    Scenario("compile", "where a load_inline build's time goes (main.cpp, nvcc's phases, link, load_inline end to "
             "end, lighter headers, a PCH) and CPU-count builds at once (issue 27)",
             _py("compile_breakdown.py", "--out", "{out}", "--jobs", "cpus", "--parallel", "3", "--deadline-s", "500"),
             590, summary="summary.txt"),
    Scenario("slim", "the slim compile cut: the conformance CUDA rows judged with it (verdicts as expected) and "
             "every CUDA kernel's compile CPU seconds slim and as before (issue 27)", _sh("gpu_slim.sh"), 590,
             summary="summary.txt"),
    Scenario("held-suite", "how long each op of the suite holds the GPU outside the timing phase (its own "
             "reference as the candidate, feedback mode), with each judgement's setups; extra args add KernelBench "
             "task files at their published sizes (--kernelbench DIR --kb-limit N; issue 27, goal 1)",
             _py("gpu_held_suite.py", "--out", "{out}", "--jobs", "12", "--timing-s", "1.0"), 590,
             summary="summary.txt"),
    Scenario("published", "published KernelBench solutions judged as one batch at the current task sizes, from "
             "empty caches then warm: judged a minute, first verdict, compile per build, GPU shares and waits "
             "(issue 27 goal 2; the leaderboard's solutions in .pub/ and KernelBench in .kb/, carried as data; "
             "PUB, KB, N, JOBS, RULES)", _sh("gpu_published.sh"), 590, summary="summary.txt"),
    Scenario("devarena", "the arena in device memory: its gpu tests, a 2.5 GiB output's fetch + compare and "
             "KernelBench 19_ReLU at its published size (6 GiB) judged with the host and the device arena "
             "(issue 27, goal 1)", _sh("gpu_devarena.sh"), 590, summary="summary.txt"),
)}
