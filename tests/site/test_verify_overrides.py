"""leaderboard verify re-judges a kernel with the config its run judged it with: the judging
policy (harness/policy.py) plus the rule set and the evaluator overrides the run recorded."""

from __future__ import annotations

import dataclasses

import pytest

from harness.leaderboard.build import build_leaderboard
from harness.leaderboard.collect import collect
from harness.leaderboard.model import Leaderboard
from harness.leaderboard.verify import verify
from harness.methods import registry
from harness.methods.base import Budget, Proposal
from harness.runner import RunConfig, run
from sandbox.verdict import Measurement, Mode, Speedup, Status, Verdict

TORCH_RELU = (
    "import torch\n\n\nclass ModelNew(torch.nn.Module):\n"
    "    def forward(self, x):\n        return torch.relu(x)\n"
)
OVERRIDES = {"max_timing_s": 0.3, "correctness_trials": 2}  # defaults: 10.0 and 5


class TorchRelu:
    """Proposes one pure-torch relu: no build, so the real evaluator judges it in seconds."""

    name, variant, paper, default_budget = "torch-relu", "", "", 1

    def optimize(self, task, llm, evaluate, budget):
        p = Proposal(source=TORCH_RELU, name="torch_relu")
        evaluate(p)
        yield p


class RecordingJudge:
    """Stands in for the evaluator during the run; keeps every config it was given."""

    def __init__(self):
        self.configs = []

    def __call__(self, task, source, config):
        self.configs.append(config)
        m = Measurement(10.0, 9.5, 10.5, 30, True)
        return Verdict(status=Status.VALID, mode=config.mode, task=task.name, device=config.device,
                       timings={"candidate": m, "eager": Measurement(20.0, 19.5, 20.5, 30, True)},
                       speedups={"eager": Speedup("eager", 2.0, 1.9, 2.1, 0.001, True)})  # fmt: skip


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """A CPU run of relu under partial rules with non-default evaluator overrides."""
    monkeypatch.setitem(
        registry.BUILTINS, "torch-relu", "tests.site.test_verify_overrides:TorchRelu"
    )
    judge = RecordingJudge()
    cfg = RunConfig(method="torch-relu", ops=["relu"], budget=Budget(evaluations=1), device="cpu",
                    results=tmp_path, eval_overrides=dict(OVERRIDES), rules="partial", progress=False)  # fmt: skip
    run(cfg, judge=judge)
    (final,) = [c for c in judge.configs if c.mode is Mode.FINAL]
    return build_leaderboard(collect([tmp_path]), [str(tmp_path)]), final


def test_verify_rebuilds_the_config_the_run_judged_its_best_kernel_with(recorded):
    lb, run_final = recorded
    seen = []

    def evaluate_fn(task, source, config):
        seen.append(config)
        return Verdict(status=Status.VALID, mode=Mode.FINAL, task=task.name,
                       speedups={"eager": Speedup("eager", 2.0, 1.9, 2.1, 0.001, True)})  # fmt: skip

    rep = verify(lb, evaluate_fn=evaluate_fn)
    (cfg,) = seen
    assert cfg.max_timing_s == 0.3 and cfg.correctness_trials == 2
    assert cfg.rules == "partial" and cfg.mode is Mode.FINAL and cfg.profile == "small"
    assert cfg == run_final  # the very config the runner built for the final verdict
    assert rep.rows[0].rules == "partial" and rep.rows[0].holds is True


def test_recorded_overrides_survive_the_leaderboard_json(recorded):
    lb, run_final = recorded
    again = Leaderboard.from_json(lb.to_json())
    seen = []
    verify(again, evaluate_fn=lambda t, s, c: seen.append(c) or Verdict(status=Status.INCORRECT))
    assert seen == [run_final]
    # a leaderboard.json from before runs carried their overrides: the entry's config has them
    old = dataclasses.replace(
        again.entries[0],
        runs=tuple(dataclasses.replace(r, eval_overrides={}) for r in again.entries[0].runs),
    )
    seen.clear()
    verify(dataclasses.replace(again, entries=(old,)),
           evaluate_fn=lambda t, s, c: seen.append(c) or Verdict(status=Status.INCORRECT))  # fmt: skip
    assert seen == [run_final]


def test_verify_with_the_real_evaluator_honours_the_recorded_overrides(recorded):
    """End to end on the CPU: the recorded correctness_trials (2, default 5) and rule set reach
    the evaluator (partial rules refuse a kernel that replaces no op of the reference, after
    its correctness trials)."""
    from sandbox.evaluate import evaluate

    lb, _ = recorded
    verdicts = []

    def real(task, source, config):
        verdicts.append(evaluate(task, source, config))
        return verdicts[-1]

    rep = verify(lb, evaluate_fn=real)
    (v,) = verdicts
    assert v.rules == "partial" and v.mode is Mode.FINAL and v.rule == "custom_code.no_replacement"
    assert sum(t.shape_label == "small" for t in v.trials) == 2
    (row,) = rep.rows
    assert row.new_status == "rejected" and row.holds is False
