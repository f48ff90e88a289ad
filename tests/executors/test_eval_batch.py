"""`harness eval-batch`: many (reference, candidate) pairs through the local pipeline, with the
real evaluator and real sandboxes on the CPU. Rows must say what `evaluate()` says for the same
pair; a second run with the same output folder judges nothing; unusable arguments exit 2;
`--store` leaves an evaluation-only run the store (and the leaderboard) can read.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.batch.inputs import BatchInputError, KernelBenchRefs, SuiteRefs, discover
from harness.cli.evalopts import eval_config
from harness.suite import load_task
from sandbox.evaluate import CandidateError, evaluate
from sandbox.verdict import Verdict
from tests.support import cli

REPO = Path(__file__).resolve().parents[2]
KB_FIXTURES = REPO / "tests" / "fixtures" / "kernelbench" / "level1"
CANDS = REPO / "tests" / "adversarial" / "candidates"
TASKS = REPO / "tests" / "adversarial" / "tasks"
SYNTAX_ERROR = "import torch\n\nclass ModelNew(torch.nn.Module:\n    pass\n"
TORCH_RELU = (  # no own kernel: rejected custom_code.torch_compute, without any C++ build
    "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
    "    def forward(self, x):\n        return torch.clamp_min(x, 0.0)\n"
)
CPU = ("--device", "cpu", "--max-timing-s", "0.2", "--jobs", "1")
FAST = (*CPU, "--mode", "feedback")


def harness(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return cli.harness("eval-batch", *args, timeout=timeout)


def rows_of(out: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    jl = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    with open(out / "results.csv", newline="") as f:
        cs = list(csv.DictReader(f))
    return {r["id"]: r for r in jl}, {r["id"]: r for r in cs}


def direct(reference: Path, candidate: Path, **kw) -> tuple[str, str | None]:
    """(status, rule) of evaluate() on the pair, with the config `harness eval` builds."""
    task = load_task(reference)
    opts = dict(device="cpu", mode="feedback", sandbox="process", seed=None, profile=None,
                timeout=600.0, allow_torch_ops=False, max_timing_s=0.2)  # fmt: skip
    opts.update(kw)
    cfg = eval_config(task, candidate_name=candidate.name, **opts)
    try:
        v = evaluate(task, candidate.read_text(), cfg)
    except CandidateError:
        return "input_error", None
    return v.status.value, v.rule


def make_tree(root: Path) -> tuple[Path, Path]:
    """A KernelBench checkout (3 tiny fixture problems) and a generations tree with one
    candidate per problem: an honest C++ relu, a rejected cheat, a syntax error."""
    kb = root / "KernelBench" / "KernelBench" / "level1"
    kb.mkdir(parents=True)
    for name in ("1_Square_matmul", "2_ReLU_activation", "3_Softmax_rows"):
        shutil.copy(KB_FIXTURES / f"{name}.py", kb / f"{name}.py")
    gens = root / "gens" / "level_1"
    (gens / "2_ReLU_activation").mkdir(parents=True)
    (gens / "3_Softmax_rows").mkdir()
    shutil.copy(CANDS / "cheat_02b_subclass_model.py", gens / "problem_1_sample_0.py")
    shutil.copy(CANDS / "honest_cpu_relu.py", gens / "2_ReLU_activation" / "honest.py")
    (gens / "3_Softmax_rows" / "broken.py").write_text(SYNTAX_ERROR)
    (gens / "notes.txt").write_text("not a candidate")
    return root / "KernelBench", root / "gens"


# -- pairing (no judging) ---------------------------------------------------------------------
def test_tree_layouts_pair_with_kernelbench_problems_by_number(tmp_path):
    kb, gens = make_tree(tmp_path)
    (gens / "level_1" / "problem_12_x.py").write_text(TORCH_RELU)  # no problem 12 in the checkout
    (gens / "level_1" / "stray.py").write_text(TORCH_RELU)
    kind, pairs, ignored = discover(gens, kernelbench=kb)
    assert kind == "tree" and [p.name for p in ignored] == ["stray.py"]
    by = {p.id: p for p in pairs}
    assert by["level_1/problem_1_sample_0"].reference.name == "1_Square_matmul.py"
    assert by["level_1/2_ReLU_activation/honest"].reference.name == "2_ReLU_activation.py"
    assert by["level_1/3_Softmax_rows/broken"].reference.name == "3_Softmax_rows.py"
    bad = by["level_1/problem_12_x"]
    assert bad.reference is None and "no problem 12" in bad.error
    # DIR may also be the checkout's inner folder or a level folder
    assert KernelBenchRefs(kb / "KernelBench").levels.keys() == {1}
    assert KernelBenchRefs(kb / "KernelBench" / "level1").find(1, 3, None)[0].name == "3_Softmax_rows.py"


def test_suite_references_by_op_name_then_by_position():
    from harness.suite.suites import resolve_paths

    refs = SuiteRefs()
    assert refs.find(1, 99, "relu")[0].stem == "relu"
    assert refs.find(1, 2, "Some_KernelBench_Name")[0] == resolve_paths("level1")[1]
    assert refs.find(7, 1, None)[0] is None and "--kernelbench" in refs.find(7, 1, None)[1]


def test_unusable_arguments_name_the_problem(tmp_path):
    with pytest.raises(BatchInputError, match="no such folder or manifest"):
        discover(tmp_path / "nope")
    with pytest.raises(BatchInputError, match="no level_N folders"):
        discover(tmp_path)
    with pytest.raises(BatchInputError, match="--kernelbench .*no such folder"):
        discover(tmp_path, kernelbench=tmp_path / "missing")
    (tmp_path / "k.py").write_text(TORCH_RELU)
    with pytest.raises(BatchInputError, match="one candidate file; judge it with `harness eval"):
        discover(tmp_path / "k.py")
    with pytest.raises(BatchInputError, match="--reference .*no such task file"):
        discover(tmp_path, reference=tmp_path / "ref.py")


def test_manifest_bad_line_exits_2_naming_line_and_field(tmp_path):
    cand = tmp_path / "k.py"
    cand.write_text(TORCH_RELU)
    good = json.dumps({"id": "a", "reference": "relu", "candidate": "k.py"})
    cases = {
        "missing-field": ([good, json.dumps({"id": "b", "reference": "relu"})], ':2: field "candidate" missing'),
        "not-json": ([good, "", '{"id": "b", "reference": '], ":3: not JSON"),
        "bad-mode": ([json.dumps({"reference": "relu", "candidate": "k.py", "mode": "fast"})], ':1: field "mode"'),
        "duplicate-id": ([good, good], ':2: field "id" \'a\' is already used on line 1'),
        "empty": (["", "# just a comment"], "empty manifest"),
    }  # fmt: skip
    for name, (lines, needle) in cases.items():
        manifest = tmp_path / f"{name}.jsonl"
        manifest.write_text("\n".join(lines) + "\n")
        r = harness(str(manifest), "--out", str(tmp_path / "out"), "--device", "cpu")
        assert r.returncode == 2, (name, r.stderr)
        assert f"{manifest}" in r.stderr and needle in r.stderr, (name, r.stderr)
        assert not (tmp_path / "out").exists() and r.stdout == ""
    r = harness(str(tmp_path / "missing"), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "no such folder or manifest" in r.stderr


# -- judging (real sandboxes) ------------------------------------------------------------------
def test_manifest_rows_match_evaluate_and_store_holds_the_batch(tmp_path):
    """Python-only candidates (no C++ build): a per-row mode, a reference named by suite op,
    an unusable candidate; the store gets an evaluation-only run."""
    from harness.store import Results

    (tmp_path / "torch_relu.py").write_text(TORCH_RELU)
    (tmp_path / "no_model.py").write_text("x = 1\n")
    relu = REPO / "reference_ops" / "activation" / "relu.py"
    manifest = tmp_path / "pairs.jsonl"
    manifest.write_text("\n".join(json.dumps(r) for r in [
        {"id": "torch", "reference": "relu", "candidate": "torch_relu.py", "mode": "feedback"},
        {"id": "nomodel", "reference": str(relu), "candidate": "no_model.py"},
    ]) + "\n")  # fmt: skip
    out, store = tmp_path / "out", tmp_path / "store"
    r = harness(str(manifest), "--out", str(out), "--store", str(store), "--label", "m", *CPU, "--mode", "final")
    assert r.returncode == 1, r.stderr  # one pair could not be judged
    assert "nomodel: [input_error]" in r.stderr and "no class ModelNew" in r.stderr
    assert "[2/2]" in r.stderr and "ETA" in r.stderr
    jl, cs = rows_of(out)
    assert jl["torch"]["status"] == "rejected" and jl["torch"]["rule"] == "custom_code.torch_compute"
    assert jl["nomodel"]["status"] == "input_error" and "no class ModelNew" in jl["nomodel"]["message"]
    assert (jl["torch"]["mode"], jl["nomodel"]["mode"]) == ("feedback", "final")  # per-row mode
    for rid, cand in (("torch", tmp_path / "torch_relu.py"), ("nomodel", tmp_path / "no_model.py")):
        assert (jl[rid]["status"], jl[rid]["rule"]) == direct(relu, cand), rid
        assert cs[rid]["status"] == jl[rid]["status"] and cs[rid]["key"] == jl[rid]["key"]
    repo = Results.open(store)
    (run,) = repo.list_runs()
    assert (run.method, run.llm, run.variant, run.status) == ("eval-batch", "none", "m", "finished")
    assert [o.op for o in repo.list_ops(run.run_id)] == ["relu"]
    cands = {c.name: c for c in repo.list_candidates(run.run_id)}
    assert set(cands) == {"torch", "nomodel"} and "no class ModelNew" in cands["nomodel"].parse_error
    (v,) = repo.list_verdicts(run.run_id)
    assert v.candidate_id == cands["torch"].candidate_id and v.status == "rejected"
    repo.close()


@pytest.fixture(scope="module")
def kb_batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    kb, gens = make_tree(root)
    out, store = root / "out", root / "store"
    args = (str(gens), "--kernelbench", str(kb), "--out", str(out), "--store", str(store), *FAST)
    r = harness(*args)
    return {"kb": kb, "gens": gens, "out": out, "store": store, "args": args, "first": r}


@pytest.mark.slow
def test_tree_rows_match_direct_evaluate(kb_batch):
    r, out = kb_batch["first"], kb_batch["out"]
    assert r.returncode == 1, r.stderr  # the syntax error could not be judged
    assert "level_1/3_Softmax_rows/broken: [input_error]" in r.stderr and "does not parse" in r.stderr
    assert "notes.txt" not in r.stderr  # not a .py file: not even a layout note
    jl, cs = rows_of(out)
    want = {
        "level_1/problem_1_sample_0": ("1_Square_matmul", "problem_1_sample_0.py", "rejected"),
        "level_1/2_ReLU_activation/honest": ("2_ReLU_activation", "2_ReLU_activation/honest.py", "valid"),
        "level_1/3_Softmax_rows/broken": ("3_Softmax_rows", "3_Softmax_rows/broken.py", "input_error"),
    }
    assert set(jl) == set(cs) == set(want)
    for rid, (ref, cand, status) in want.items():
        row = jl[rid]
        ref_path, cand_path = Path(row["reference"]), Path(row["candidate"])
        assert ref_path.stem == ref and cand_path.as_posix().endswith(cand)
        got = (row["status"], row["rule"])
        assert got[0] == status, (rid, got, row["message"])  # the honest relu: valid, nothing else
        assert got == direct(ref_path, cand_path), (rid, got)
        assert {k: str(v if v is not None else "") for k, v in row.items()} == cs[rid]
        if row["status"] == "input_error":
            assert row["verdict_file"] is None and row["message"]
            continue
        data = (out / row["verdict_file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == row["verdict_sha256"]
        v = Verdict.from_json(data.decode())
        assert (v.status.value, v.rule) == got and v.evidence["executor"]["name"] == "local"
    honest = jl["level_1/2_ReLU_activation/honest"]
    assert honest["speedup_eager"] > 0 and honest["candidate_median_us"] > 0
    assert honest["speedup_eager_ci_low"] <= honest["speedup_eager"] <= honest["speedup_eager_ci_high"]
    assert honest["speedup_eager_significant"] in (True, False) and honest["speedup_compile"] is None
    assert jl["level_1/problem_1_sample_0"]["rule"] == "custom_code.torch_compute"


@pytest.mark.slow
def test_a_second_run_judges_nothing_and_leaves_the_same_output(kb_batch):
    out = kb_batch["out"]
    before = {p.name: p.read_bytes() for p in (out / "results.jsonl", out / "results.csv")}
    verdicts = sorted(p.name for p in (out / "verdicts").iterdir())
    r = harness(*kb_batch["args"])
    assert r.returncode == kb_batch["first"].returncode == 1, r.stderr
    assert "3 judged earlier (resumed), skipped" in r.stderr and "0 judged now, 3 earlier" in r.stdout
    assert {p.name: p.read_bytes() for p in (out / "results.jsonl", out / "results.csv")} == before
    assert sorted(p.name for p in (out / "verdicts").iterdir()) == verdicts
    # a changed candidate is judged again; its old row is replaced, the others stay
    broken = kb_batch["gens"] / "level_1" / "3_Softmax_rows" / "broken.py"
    broken.write_text(SYNTAX_ERROR + "# edited\n")
    r = harness(*kb_batch["args"])
    assert "1 judged now, 2 earlier" in r.stdout, r.stderr
    jl, _ = rows_of(out)
    assert len((out / "results.jsonl").read_text().splitlines()) == 3 == len(jl)


@pytest.mark.slow
def test_store_holds_the_tree_as_an_evaluation_only_run(kb_batch):
    from harness.leaderboard.collect import collect
    from harness.store import Results

    repo = Results.open(kb_batch["store"])
    (run,) = repo.list_runs()
    assert (run.method, run.llm, run.status, run.variant) == ("eval-batch", "none", "finished", "gens")
    ops = {o.op: o for o in repo.list_ops(run.run_id)}
    assert set(ops) == {"1_Square_matmul", "2_ReLU_activation", "3_Softmax_rows"}
    assert all(o.status == "finished" for o in ops.values())
    verdicts = repo.list_verdicts(run.run_id)
    cands = repo.list_candidates(run.run_id)
    # each kernel once, whatever reruns happened (the edited syntax error is a second candidate)
    assert len({(c.op, c.name, c.source_sha256) for c in cands}) == len(cands) >= 3
    assert len(verdicts) == 2 and {v.op for v in verdicts} == {"1_Square_matmul", "2_ReLU_activation"}
    assert all(c.parse_error for c in cands if c.op == "3_Softmax_rows")
    repo.close()
    (data,) = collect([kb_batch["store"]])
    assert {o.op for o in data.outcomes} == set(ops) and data.run.method == "eval-batch"



def test_a_task_is_judged_once_its_check_passed_and_a_refusal_writes_no_row_of_the_refused_task(tmp_path):
    """The task check runs beside the judging (harness/batch/checkgate.py): a task's candidates are
    judged and written once its own check passed, while the others are still checked; a refusal
    then ends the batch with no row of the refused task. Here the check passes the first task,
    waits until that task's row is written, and refuses the second."""
    import time

    from harness.batch.driver import BatchOptions, run_batch
    from harness.batch.inputs import Pair

    relu, other, cand = REPO / "reference_ops" / "activation" / "relu.py", KB_FIXTURES / "2_ReLU_activation.py", \
        tmp_path / "torch_relu.py"
    cand.write_text(TORCH_RELU)
    rows = tmp_path / "out" / "results.jsonl"
    seen: dict[str, bool] = {}

    def check(on_pass):
        task = load_task(relu)
        on_pass(task, eval_config(task, device="cpu", mode="feedback", sandbox="process", seed=None, profile=None,
                                  timeout=600.0, allow_torch_ops=False, max_timing_s=0.2, candidate_name=cand.name))
        deadline = time.monotonic() + 300
        while not (rows.is_file() and rows.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.2)
        seen["written_while_checking"] = rows.is_file() and bool(rows.read_text().strip())
        raise SystemExit(2)  # the second task refused

    with pytest.raises(SystemExit):
        run_batch([Pair("a", cand, relu), Pair("b", cand, other)],
                  BatchOptions(out=tmp_path / "out", device="cpu", mode="feedback", max_timing_s=0.2, jobs=1,
                               progress=False), before_judging=check)
    assert seen["written_while_checking"] is True  # the first verdict did not wait for the whole check
    assert [json.loads(line)["id"] for line in rows.read_text().splitlines()] == ["a"]  # none of the refused task


def test_a_rows_message_names_the_exception_of_a_traceback():
    """A harness error whose text is a worker's start-up traceback: the row's one line keeps the
    exception (the traceback's last line), not "Traceback (most recent call last):"."""
    from harness.batch.output import short

    err = ("SandboxUnavailable: candidate worker failed to start: Traceback (most recent call last):\n"
           '  File "/x/serve.py", line 9, in main\n    w = Worker(a.role)\n        ^^^^^^\n'
           "RuntimeError: CUDA error: out of memory\n")
    assert short(err) == "SandboxUnavailable: candidate worker failed to start: RuntimeError: CUDA error: out of memory"
    assert short("rejected: too slow\nmore") == "rejected: too slow" and short("") == ""
