"""The task check task.degenerate (sandbox/intake/taskcheck.py, issue 25): a task whose reference output
does not change beyond its tolerance when its inputs and weights are redrawn is refused by
`harness eval`, `eval-batch` and `run` (exit 2, one line naming the check) unless
--allow-degenerate (then judged, and recorded in the verdict); `harness suite lint` lists it with
the evidence. Honest controls (KernelBench fixtures, bundled ops) pass the check.

The check runs in a reference worker; its answers are kept per task source in the cache root, so
the CLI tests below (default cache root) compute the fixture's answer once and read it after."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from sandbox.evaluate import EvalConfig, evaluate
from sandbox.intake.task import load_task
from sandbox.intake.taskcheck import (
    CHECK,
    DegenerateTask,
    TaskCheck,
    check_lanes,
    check_tasks,
    lookup,
    store_path,
    timing_line,
    visible_gpus,
)

REPO = Path(__file__).resolve().parents[2]
DEGENERATE = REPO / "tests" / "fixtures" / "degenerate" / "23_Conv3d_GroupNorm_Mean.py"
KB_RELU = REPO / "tests" / "fixtures" / "kernelbench" / "level1" / "2_ReLU_activation.py"
RELU_OP = REPO / "reference_ops" / "activation" / "relu.py"
WRONG_WEIGHTS = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """The reference's ops with weights of its own, not the reference's: a wrong kernel."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)
        with torch.no_grad():
            self.conv.weight.mul_(-3.0).add_(0.5)

    def forward(self, x):
        return self.group_norm(self.conv(x)).mean(dim=[1, 2, 3, 4])
'''


def cpu(task, **kw) -> EvalConfig:
    return EvalConfig(device="cpu", profile="small" if "small" in task.shapes else "default", **kw)


def one_error_line(stderr: str) -> str:
    """The refusal: exactly one "error:" line, naming the check, and no traceback."""
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and CHECK in errors[0] and "Traceback" not in stderr, stderr
    return errors[0]


def test_redrawn_inputs_and_weights_find_the_degenerate_task_and_pass_the_controls(tmp_path):
    broken = tmp_path / "broken.py"  # a reference that fails: left to judging, which reports it
    broken.write_text("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n"
                      "    def forward(self, x):\n        raise RuntimeError('boom')\n"
                      "def get_inputs():\n    return [torch.randn(4)]\ndef get_init_inputs():\n    return []\n")
    dying = tmp_path / "dying.py"  # one that kills its worker: the next task gets a fresh one
    dying.write_text(broken.read_text().replace("raise RuntimeError('boom')", "import os; os._exit(3)"))
    tasks = [load_task(p) for p in (DEGENERATE, KB_RELU, broken, dying, RELU_OP)]
    items = [(t, cpu(t, build_dir=str(tmp_path / "cache"))) for t in tasks]
    degen, kb_relu, failed, died, relu = check_tasks(items)
    assert (degen.degenerate, kb_relu.degenerate, relu.degenerate) == (True, False, False), (degen, kb_relu, relu)
    assert degen.changed == 0.0 and degen.max_abs_diff < 1e-6 and not degen.cached
    assert "3 draws of inputs and weights at profile default (cpu) agree within atol 0.0001" in degen.evidence()
    assert kb_relu.changed > 0.5 and relu.changed > 0.5 and relu.profile == "small"
    assert failed.degenerate is None and "boom" in failed.error
    assert died.degenerate is None and "worker died" in died.error
    # where the time went: the steps of every draw, and the worker's start on the task that waited for it
    assert set(degen.took_s) == {"start", "setup", "own_call", "keep_own", "check_own"} and degen.took_s["start"] > 0, \
        degen.took_s
    assert set(kb_relu.took_s) == {"setup", "own_call", "keep_own", "check_own"} and \
        min(kb_relu.took_s.values()) >= 0 and kb_relu.took_s["setup"] + kb_relu.took_s["own_call"] > 0, kb_relu.took_s
    assert "start" in relu.took_s  # a fresh worker after the one that died
    line = timing_line([degen, kb_relu, relu], 12.5)
    assert line.startswith("task check: 3 task(s) checked in 12.5 s (seconds per step, summed: start ") and \
        ", check_own " in line, line
    # kept per task source beside the reference cache's entry (not a failure): the next ask starts no worker
    assert store_path(tmp_path / "cache", tasks[0], "cpu").is_file()
    assert not store_path(tmp_path / "cache", tasks[2], "cpu").exists()
    again = check_tasks(items[:2] + items[4:])
    assert all(r.cached for r in again) and [r.degenerate for r in again] == [True, False, False]
    assert timing_line(again, 0.1) == ""  # nothing checked now: no line
    assert lookup(tmp_path / "cache", tasks[0], "small", "cpu") is None  # another profile: not checked yet
    copy = tmp_path / "copy.py"  # the same source elsewhere: the kept answer, naming the file asked about
    copy.write_text(DEGENERATE.read_text())
    kept = lookup(tmp_path / "cache", load_task(copy), "default", "cpu")
    assert kept.degenerate and kept.path == str(copy) and str(copy) in kept.refusal()
    # evaluate() itself refuses a task known to be degenerate, before any worker starts
    with pytest.raises(DegenerateTask, match=f"task check {CHECK}"):
        evaluate(tasks[0], WRONG_WEIGHTS, cpu(tasks[0], build_dir=str(tmp_path / "cache")))


def test_on_a_gpu_the_lock_covers_the_draws_calls_not_their_setups(tmp_path):
    """The GPU path's lock (``_Held``) around a real reference worker's draws: every draw's model is
    built first without the device held (side by side in the worker, ``keep_as``), then the calls and
    comparisons in one hold; the lock's wait is recorded. Run on the CPU's lock: a CPU worker answers
    the same requests. Before session 32 the whole check held the lock: setups held it too."""
    from sandbox.intake.taskcheck import _Held, _probe
    from sandbox.isolation import get_launcher
    from sandbox.worker.judgeenv import worker_limits
    from sandbox.worker.session import WorkerSession

    task = load_task(KB_RELU)
    cfg = cpu(task, build_dir=str(tmp_path / "cache"))
    w = WorkerSession("reference", get_launcher(cfg.sandbox, unsafe=cfg.unsafe_no_isolation), "cpu", None,
                      time.monotonic() + 120, worker_limits(cfg)[0])
    try:
        w.connect()
        took: dict[str, float] = {}
        held = _Held(w, "cpu", True, took)
        seen: list[tuple[str, bool]] = []
        request = w.request

        def recorded(op, **kw):
            seen.append((op, held.lock.locked()))
            return request(op, **kw)

        w.request = recorded
        res = _probe(w, task, cfg.profile, "cpu", held)
    finally:
        w.close()
    assert res.degenerate is False and not res.error, res
    assert seen == [("setup", False)] * 3 + [("own_call", True), ("keep_own", True)] + \
        [("own_call", True), ("check_own", True)] * 2, seen
    assert not held.lock.locked() and took["lock_wait"] >= 0 and "warm" not in took, took


def test_a_check_stopped_midway_keeps_the_tasks_it_checked(tmp_path):
    """Each answer is kept as it is known: a batch stopped during the check (here at the second
    task's answer) finds the first task checked next time. Before session 32 nothing was kept until
    the whole check ended."""
    tasks = [load_task(p) for p in (KB_RELU, RELU_OP)]
    items = [(t, cpu(t, build_dir=str(tmp_path / "cache"))) for t in tasks]
    got: list[str] = []

    def stop_at_the_second(task, cfg, answer):
        got.append(task.name)
        if len(got) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        check_tasks(items, on_answer=stop_at_the_second)
    assert store_path(tmp_path / "cache", tasks[0], "cpu").is_file()
    assert lookup(tmp_path / "cache", tasks[0], items[0][1].profile, "cpu").degenerate is False


def test_the_checks_gpu_memory_is_one_workers_draw():
    from sandbox.intake.datasize import (
        CONTEXT_BYTES,
        check_gpu_bytes,
        data_size,
        judgement_gpu_bytes,
    )

    task = load_task(KB_RELU)
    s = data_size(task, "default")
    gpu = EvalConfig(device="cuda", profile="default")
    assert check_gpu_bytes(task, gpu, 3) == 2 * s.inputs + 3 * s.outputs + 3 * s.weights + CONTEXT_BYTES
    assert check_gpu_bytes(task, gpu, 3) < judgement_gpu_bytes(task, gpu)  # a judgement: two workers and the arena
    assert check_gpu_bytes(task, cpu(task), 3) is None


def test_answers_round_trip():
    r = TaskCheck("t", "t.py", "small", "cpu", True, 1e-4, 1e-4, max_abs_diff=1e-9, changed=0.0)
    assert TaskCheck.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_the_checkers_take_the_next_task_as_each_becomes_free(monkeypatch, tmp_path):
    """On a GPU the check runs in several reference workers per visible GPU (check_lanes), each
    taking the next task not yet taken, in order, as it becomes free. Run here with three CPU
    workers (the lanes a GPU host would have, made CPU ones): every task answered once, by more
    than one worker, each answer naming its task."""
    import torch

    from sandbox.intake import taskcheck

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    assert visible_gpus("cuda") == visible_gpus("cuda:1") == ["cuda:0", "cuda:1", "cuda:2"]
    assert visible_gpus("cpu") == ["cpu"] and check_lanes("cpu") == ["cpu"]
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert visible_gpus("cuda") == ["cuda"] and check_lanes("cuda") == ["cuda"] * 3
    monkeypatch.setenv("KH_CHECKERS_PER_GPU", "2")
    assert check_lanes("cuda") == ["cuda"] * 2
    monkeypatch.setattr(taskcheck, "check_lanes", lambda device: [device] * 3)
    tasks = [load_task(p) for p in (KB_RELU, RELU_OP, DEGENERATE, KB_RELU, RELU_OP)]
    pairs = taskcheck._run_split([(t, cpu(t, build_dir=str(tmp_path))) for t in tasks])
    assert sorted(t.name for (t, _), _ in pairs) == sorted(t.name for t in tasks)
    assert all(res.task == t.name and res.degenerate is (t.name == tasks[2].name) for (t, _), res in pairs), pairs
    assert sum("start" in res.took_s for _, res in pairs) >= 2  # more than one worker started


@pytest.fixture(scope="module")
def wrong_weights(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("cand") / "wrong_weights.py"
    p.write_text(WRONG_WEIGHTS)
    return p


def test_harness_eval_refuses_and_allow_degenerate_is_recorded_in_the_verdict(wrong_weights, tmp_path):
    args = ["eval", str(DEGENERATE), str(wrong_weights), "--device", "cpu", "--allow-torch-ops", "--json"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert one_error_line(r.stderr).startswith(f"error: {DEGENERATE}: task check {CHECK}")
    # allowed: judged (a static-scan rejection here, so no worker starts) and the verdict says so
    scanned = tmp_path / "scanned.py"
    scanned.write_text("import socket\n" + WRONG_WEIGHTS)
    r = CliRunner().invoke(main, ["eval", str(DEGENERATE), str(scanned), "--device", "cpu", "--json",
                                  "--allow-degenerate"])
    v = json.loads(r.stdout)
    assert r.exit_code == 1 and (v["status"], v["rule"]) == ("rejected", "sandbox.network"), r.output
    assert v["evidence"]["allow_degenerate"] is True and v["evidence"]["task_check"]["degenerate"] is True


def test_eval_batch_and_run_refuse_before_judging(wrong_weights, tmp_path):
    folder = wrong_weights.parent
    r = CliRunner().invoke(main, ["eval-batch", str(folder), "--reference", str(DEGENERATE), "--out",
                                  str(tmp_path / "out"), "--device", "cpu", "--quiet"])
    assert r.exit_code == 2, r.output
    one_error_line(r.stderr)
    assert not (tmp_path / "out" / "results.jsonl").exists()  # nothing judged
    r = CliRunner().invoke(main, ["run", "--method", "best-of-n", "--llm", "offline", "--suite", str(DEGENERATE),
                                  "--device", "cpu", "--results", str(tmp_path / "results"), "--quiet"])
    assert r.exit_code == 2, r.output
    one_error_line(r.stderr)
    assert not (tmp_path / "results" / "harness.sqlite").exists()  # no run was made


def test_suite_lint_lists_the_degenerate_task_with_its_evidence():
    r = CliRunner().invoke(main, ["suite", "lint", str(DEGENERATE.parent), "--json"])
    assert r.exit_code == 1, r.output
    (row,) = json.loads(r.stdout)
    assert row["task"] == "23_Conv3d_GroupNorm_Mean" and row["degenerate"] is True and row["profile"] == "default"
    assert "agree within atol 0.0001" in row["evidence"]
    r = CliRunner().invoke(main, ["suite", "lint", str(DEGENERATE.parent)])
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("DEGENERATE"))
    assert "23_Conv3d_GroupNorm_Mean" in line and "agree within" in line and str(DEGENERATE) in line


def test_verdict_keys_change_only_when_allow_degenerate_is_set():
    import dataclasses

    from harness.store import config_key

    before = {k: v for k, v in dataclasses.asdict(EvalConfig()).items() if k != "allow_degenerate"}
    assert config_key(EvalConfig()) == config_key(before)  # stored verdicts stay reusable
    assert config_key(EvalConfig(allow_degenerate=True)) != config_key(EvalConfig())


def test_no_bundled_op_is_degenerate():
    """`harness suite lint` over every op of reference_ops/ at the profile a CPU judgement uses (one
    reference worker; the answers are kept in the default cache root, where `harness eval` and
    `run` find them)."""
    r = CliRunner().invoke(main, ["suite", "lint", "full", "--json"])
    rows = json.loads(r.stdout)
    assert len(rows) == 113 and r.exit_code == 0, r.output[-2000:]
    assert not [(row["task"], row["evidence"]) for row in rows if row["degenerate"] is not False]
    r = CliRunner().invoke(main, ["suite", "lint", "relu", "--all"])
    assert r.exit_code == 0 and r.stdout.startswith("ok ") and "0 degenerate" in r.stdout, r.output


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_the_check_on_cuda_at_the_default_profile(tmp_path):
    tasks = [load_task(p) for p in (DEGENERATE, KB_RELU, RELU_OP)]
    items = [(t, EvalConfig(device="cuda", profile="default", build_dir=str(tmp_path))) for t in tasks]
    degen, kb_relu, relu = check_tasks(items)
    assert (degen.degenerate, kb_relu.degenerate, relu.degenerate) == (True, False, False), (degen, kb_relu, relu)
    assert degen.device == "cuda" and relu.profile == "default" and relu.changed > 0.5
    # three tasks over three reference workers on the GPU (check_lanes): each its own worker's start and
    # GPU warm-up at its first hold of the lock; the lock's wait recorded
    for r in (degen, kb_relu, relu):
        assert {"start", "lock_wait", "warm", "setup", "own_call", "check_own"} <= set(r.took_s), r.took_s
