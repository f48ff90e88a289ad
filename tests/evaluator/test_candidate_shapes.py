"""Candidates as the field writes them (sandbox/intake/candidate.py): a ModelNew class, a ModelNew
alias, a class named Model that is not the reference's own, and signatures that accept the
reference's calls are judged, with each accommodation noted and the judged class named
(``evidence.entry``); ``ModelNew`` takes precedence over ``Model``; real mismatches stay exit-2 errors."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sandbox.evaluate import CandidateError, EvalConfig, evaluate
from sandbox.intake.candidate import entry_point
from sandbox.intake.task import load_task
from sandbox.verdict import Status

RELU = Path(__file__).resolve().parents[1] / "adversarial" / "tasks" / "relu.py"
REF = RELU.read_text()
BODY = "        return torch.relu(x)\n"


def entry(src: str):
    return entry_point(ast.parse(src), "cand.py", REF)


def test_modelnew_class_needs_no_accommodation():
    e = entry("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n" + BODY)
    assert e.name == "ModelNew" and e.notes == []


def test_alias_is_accepted_and_noted():
    e = entry("import torch.nn as nn\nclass Fast(nn.Module):\n    def forward(self, x):\n" + BODY + "ModelNew = Fast\n")
    assert e.name == "ModelNew" and e.notes == ["ModelNew is an alias of Fast"]


def test_a_class_named_model_is_accepted_when_it_is_not_the_references_own():
    e = entry("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return x.clamp_min(0)\n")
    assert e.name == "Model" and "named Model" in e.notes[0]


def test_the_references_own_model_copied_unchanged_is_refused():
    ref_cls = next(n for n in ast.parse(REF).body if isinstance(n, ast.ClassDef) and n.name == "Model")
    with pytest.raises(CandidateError, match="no class ModelNew .its class Model is the reference's own"):
        entry("import torch\nimport torch.nn as nn\n" + ast.unparse(ref_cls) + "\n")


def test_extra_parameters_with_defaults_are_call_compatible():
    e = entry("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x, alpha=1.0):\n" + BODY)
    assert e.notes == ["ModelNew.forward has parameters the reference does not pass (alpha, with defaults)"]
    e = entry("import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, *args):\n        return args[0].relu()\n")
    assert e.notes == ["ModelNew.forward has parameters the reference does not pass (*args)"]


@pytest.mark.parametrize("sig", ["self", "self, x, y", "self, x, y, *, z"])
def test_signatures_that_cannot_take_the_references_call_are_errors(sig):
    with pytest.raises(CandidateError, match="ModelNew.forward takes .* the reference's Model.forward takes 1"):
        entry(f"import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward({sig}):\n" + BODY)


def test_no_class_at_all_is_an_error():
    with pytest.raises(CandidateError, match="no class ModelNew"):
        entry("import torch\nx = 1\n")


REF_MODEL = ast.unparse(next(n for n in ast.parse(REF).body if isinstance(n, ast.ClassDef) and n.name == "Model"))
FAST = "import torch\nimport torch.nn as nn\nclass Fast(nn.Module):\n    def forward(self, x):\n" + BODY


def test_model_bound_to_the_candidates_own_class_is_accepted_and_named():
    """The form of a published set of agent solutions: class OptimizedModel, then Model = OptimizedModel."""
    e = entry(FAST.replace("Fast", "OptimizedModel") + "Model = OptimizedModel\n")
    assert (e.name, e.cls, e.binding) == ("Model", "OptimizedModel", "alias")
    assert e.notes == ["Model is an alias of OptimizedModel (no ModelNew)"]


@pytest.mark.parametrize("src, want", [
    # ModelNew takes precedence over a Model of the file's own (KernelBench reads only ModelNew) ...
    (FAST + "ModelNew = Fast\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\n",
     ("ModelNew", "Fast", ["ModelNew is an alias of Fast",
                           "the file also binds its own Model; ModelNew is judged (it takes precedence)"])),
    (FAST.replace("Fast", "ModelNew") + "Model = ModelNew\n",
     ("ModelNew", "ModelNew", ["the file also binds its own Model; ModelNew is judged (it takes precedence)"])),
    # ... and the reference's own Model beside it is no accommodation at all
    ("import torch\n" + REF_MODEL + "\n" + FAST.replace("Fast", "ModelNew"), ("ModelNew", "ModelNew", [])),
    # the last binding of a name is what the file runs: the reference's Model rebound to the candidate's class
    ("import torch\n" + REF_MODEL + "\n" + FAST + "Model = Fast\n",
     ("Model", "Fast", ["Model is an alias of Fast (no ModelNew)"])),
    (FAST + "ModelNew = Fast\nclass ModelNew(nn.Module):\n    def forward(self, x):\n" + BODY,
     ("ModelNew", "ModelNew", [])),
    # an alias of an alias names the class at the end of the chain
    (FAST + "Opt = Fast\nModelNew = Opt\n", ("ModelNew", "Fast", ["ModelNew is an alias of Opt"])),
])
def test_binding_precedence(src, want):
    e = entry(src)
    assert (e.name, e.cls, e.notes) == want


def test_the_alias_target_signature_is_checked():
    with pytest.raises(CandidateError, match="Model.forward takes 2 positional"):
        entry(FAST.replace("self, x", "self, x, y") + "Model = Fast\n")


@pytest.mark.parametrize("src, note, cls", [
    ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x, alpha=1.0):\n"
     "        return torch.relu(x) * alpha\n", "named Model", "Model"),
    ("import torch\nimport torch.nn as nn\nclass Opt(nn.Module):\n    def forward(self, x):\n"
     "        return torch.relu(x)\nModelNew = Opt\n", "alias of Opt", "Opt"),
    ("import torch\nimport torch.nn as nn\nclass OptimizedModel(nn.Module):\n    def forward(self, x):\n"
     "        return torch.relu(x)\nModel = OptimizedModel\n", "Model is an alias of OptimizedModel", "OptimizedModel"),
])
def test_accommodated_candidates_are_judged_valid(src, note, cls):
    cfg = EvalConfig(device="cpu", profile="small", allow_torch_ops=True, max_timing_s=0.5,
                     feedback_timing_s=0.5, target_ci=0.05, candidate_name="cand.py")
    v = evaluate(load_task(RELU), src, cfg)
    assert v.status is Status.VALID, (v.status, v.rule, v.message)
    assert any(note in n for n in v.evidence["accommodations"]), v.evidence
    assert v.evidence["entry"]["class"] == cls, v.evidence["entry"]
    from harness.cli.eval import summary

    assert f"candidate: {v.evidence['accommodations'][0]}" in summary(v)  # `harness eval` says it too


def test_an_alias_to_something_that_is_not_a_module_is_a_runtime_error():
    cfg = EvalConfig(device="cpu", profile="small", allow_torch_ops=True, candidate_name="cand.py")
    v = evaluate(load_task(RELU), "import torch\nModelNew = len\n", cfg)
    assert v.status is Status.RUNTIME_ERROR and "not an nn.Module subclass" in v.logs, (v.status, v.logs[-500:])
