"""A task too big for this machine, and ``--set NAME=VALUE`` (issue 26, item 1), with KernelBench's
19_ReLU unchanged (tests/fixtures/kernelbench-fullsize/19_ReLU.py: batch_size=4096, dim=393216, a
6.0 GiB float32 input): on a CPU it is refused in one line within seconds, before any worker
starts (it used to run 186 s and end in a worker's traceback), naming the need, the limit and the
``--set`` that fixes it; with ``--set batch_size=16 --set dim=16384`` the same file is judged, and
the values are in the verdict. The size is read on torch's meta device (``Task.data_size``)."""

from __future__ import annotations

import json
import re
import time

import pytest

from harness.cli.eval import summary
from harness.tasksize import parse_sets
from sandbox.config import EvalConfig
from sandbox.intake.task import load_task
from sandbox.verdict import Verdict
from tests.support.cli import REPO, harness, invoke

RELU19 = REPO / "tests" / "fixtures" / "kernelbench-fullsize" / "19_ReLU.py"
GIB = 2**30
TORCH_RELU = ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
              "    def forward(self, x):\n        return torch.relu(x)\n")
REFUSAL = re.compile(r"^harness: \S*19_ReLU\.py: too big to judge on cpu: one judgement needs at least 24\.0 GiB "
                     r"\(inputs 6\.0 GiB, outputs 6\.0 GiB per call; the judge keeps two copies of each\), above a "
                     r"judging worker's memory limit here \([\d.]+ GiB: min\(8 GiB, 35% of this machine's [\d.]+ GiB\)\); "
                     r"shrink it with (--set \S+=\d+(?: --set \S+=\d+)*) \(the file has batch_size=4096, dim=393216\), "
                     r"or judge it on a GPU$")


def test_the_size_comes_from_the_meta_device_without_allocating():
    size = load_task(RELU19).data_size()
    assert (size.inputs, size.outputs, size.weights) == (4096 * 393216 * 4, 4096 * 393216 * 4, 0)
    # the reference worker keeps the inputs it made and the call's own copy, the output and its snapshot
    assert size.worker_need(cuda=False) == 4 * 4096 * 393216 * 4
    # on a GPU the candidate's worker shares the device: its inputs, output and snapshot besides
    assert size.worker_need(cuda=True) == 7 * 4096 * 393216 * 4


def test_kernelbench_relu_unchanged_is_refused_in_seconds_by_eval():
    t0 = time.monotonic()
    r = harness("eval", RELU19, REPO / "tests" / "evaluator" / "candidates" / "build_apart_lazy_relu.py",
                "--device", "cpu", timeout=300)
    took = time.monotonic() - t0
    assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("warning: CPU evaluation")]
    assert len(lines) == 1 and REFUSAL.match(lines[0]), r.stderr
    assert took < 90, took  # the judge took 186 s to fail; no worker starts here (a 2-core box, loaded)
    # the suggested values fit, with room: need at most a quarter of the limit
    sets = parse_sets(s.removeprefix("--set ") for s in re.findall(r"--set \S+", REFUSAL.match(lines[0]).group(1)))
    cfg = EvalConfig(device="cpu")
    check = load_task(RELU19).with_globals(sets).size_check(cfg)
    assert check.fits and 4 * check.need <= check.limit


@pytest.mark.parametrize("command", ["eval-batch", "run"])
def test_kernelbench_relu_unchanged_is_refused_by_eval_batch_and_run(tmp_path, command):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.py").write_text(TORCH_RELU)
    args = {"eval-batch": ["eval-batch", tmp_path / "kernels", "--reference", RELU19, "--out", tmp_path / "out"],
            "run": ["run", "--method", "one-shot", "--suite", RELU19, "--results", tmp_path / "results"]}[command]
    r = invoke(*args, "--device", "cpu")
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if not ln.startswith("warning: CPU evaluation")]
    assert len(lines) == 1 and REFUSAL.match(lines[0]), r.output
    assert not (tmp_path / "out" / "results.jsonl").exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("item, said", [
    ("hidden=3", "--set hidden: {path}: not a module-level global of the file; its globals: batch_size=4096, "
                 "dim=393216"),
    ("dim", "--set dim: write NAME=VALUE with NAME a global of the task file (e.g. --set batch_size=16)"),
    ("dim=lots", "--set dim=lots: 'lots' is not a Python literal; write a number, a tuple such as (16, 1024), "
                 "or a quoted string"),
])
def test_a_bad_set_is_one_line(item, said, cli):
    r = cli("eval", RELU19, RELU19, "--device", "cpu", "--set", item)
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines()[-1] == "harness: " + said.format(path=RELU19)


def test_set_judges_the_same_file_small_and_the_verdict_records_it(tmp_path):
    cand = tmp_path / "relu_new.py"
    cand.write_text(TORCH_RELU)  # torch computes (--allow-torch-ops): no build; the task's size is under test
    r = harness("eval", RELU19, cand, "--device", "cpu", "--mode", "feedback", "--allow-torch-ops",
                "--max-timing-s", "0.3", "--set", "batch_size=16", "--set", "dim=16384", "--json", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    v = json.loads(r.stdout)
    assert v["status"] == "valid" and v["evidence"]["task_globals"] == {"batch_size": 16, "dim": 16384}
    # the judge's buffers are the small call's (16 x 16384 floats: 1 MiB, in 2 MiB steps), not 6 GiB
    assert v["evidence"]["arena"]["sizes"]["ref_in"] == 2 * 2**20
    assert "task globals set: batch_size=16, dim=16384" in summary(Verdict.from_json(r.stdout))  # without --json


def test_set_rewrites_the_globals_where_the_file_assigns_them():
    task = load_task(RELU19)
    small = task.with_globals({"batch_size": 16, "dim": 16384})
    assert small.globals_set == {"batch_size": 16, "dim": 16384} and small.sha256 != task.sha256
    mod = small.load_module()
    assert (mod.batch_size, mod.dim) == (16, 16384) and tuple(mod.get_inputs()[0].shape) == (16, 16384)
    assert small.data_size().inputs == 16 * 16384 * 4
    # a profile's own value of a name set is dropped: the value set wins at every profile
    relu = load_task(REPO / "reference_ops" / "activation" / "relu.py")
    assert relu.with_globals({"DIM": 64}).shapes["small"] == {"BATCH": 16}
    assert relu.with_globals({"DIM": 64}).data_size("small").inputs == 16 * 64 * 4


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_the_full_size_file_fits_and_a_bigger_one_is_refused_against_the_gpus_memory():
    """On an 80 GB H100 19_ReLU as published fits (both workers: 7 x 6.0 GiB = 42 GiB on the device,
    the arena's 24 GiB in host RAM); four times its batch does not, against the GPU's memory read
    from nvidia-smi (the parent process never initialises CUDA for it)."""
    cfg = EvalConfig(device="cuda", profile="default")
    task = load_task(RELU19)
    check = task.size_check(cfg)
    assert check.fits, check
    r = invoke("eval", RELU19, RELU19, "--device", "cuda", "--set", "batch_size=16384")
    assert r.exit_code == 2, r.output
    line = r.output.strip().splitlines()[-1]
    assert "too big to judge on cuda: one judgement needs at least 168.0 GiB" in line, line
    assert "above the GPU's memory (" in line and "shrink it with --set " in line and "or judge it on a GPU" not in line


def test_on_cuda_the_limit_is_the_gpus_memory_from_nvidia_smi(monkeypatch):
    """The GPU path on a CPU box: nvidia-smi's answer stands in for an 80 GB card, /proc/meminfo's for
    the H100 machine's 128 GiB of RAM."""
    import sandbox.machine
    import sandbox.worker.judgeenv
    from harness.tasksize import refuse_oversize
    from harness.usererror import UserError

    monkeypatch.setattr(sandbox.machine, "nvidia_smi", lambda field: "81559 MiB" if field == "memory.total" else None)
    monkeypatch.setattr(sandbox.worker.judgeenv, "mem_total", lambda: 128 * GIB)
    cfg = EvalConfig(device="cuda", profile="default")
    assert load_task(RELU19).size_check(cfg).fits  # 42 GiB on the device, 24 GiB of arena in host RAM
    big = load_task(RELU19).with_globals({"batch_size": 16384})
    with pytest.raises(UserError) as e:
        refuse_oversize([(big, cfg)])
    assert "too big to judge on cuda: one judgement needs at least 168.0 GiB" in str(e.value)
    assert "above the GPU's memory (79.6 GiB)" in str(e.value) and "judge it on a GPU" not in str(e.value)


def test_the_device_arena_is_used_only_where_the_buffers_fit_beside_the_data(monkeypatch):
    """sandbox/intake/datasize.py ``device_arena_fits``: 19_ReLU at its published size needs 42 GiB
    on the device and 24 GiB of buffers: both on an 80 GB card, so the arena goes there; at twice the
    batch (84 + 48 GiB) it does not, and the judgement keeps its buffers in host RAM (it is still
    judged: size_check counts them against the RAM, 48 of 128 GiB). A CPU judgement never asks."""
    import sandbox.machine
    import sandbox.worker.judgeenv
    from sandbox.intake.datasize import device_arena_fits

    monkeypatch.setattr(sandbox.machine, "nvidia_smi", lambda field: "81559 MiB" if field == "memory.total" else None)
    monkeypatch.setattr(sandbox.worker.judgeenv, "mem_total", lambda: 256 * GIB)
    cfg = EvalConfig(device="cuda", profile="default")
    assert device_arena_fits(load_task(RELU19), cfg)
    assert not device_arena_fits(load_task(RELU19).with_globals({"batch_size": 8192}), cfg)
    assert not device_arena_fits(load_task(RELU19), EvalConfig(device="cpu", profile="default"))
