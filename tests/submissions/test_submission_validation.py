"""Submission folders: every broken field is reported with its field and a fix; scaffolds validate;
the loader turns folders into methods (plugin entries and evaluation-only kernels)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.submit import cli as submit_cli
from harness.methods.base import Budget
from harness.submissions import SubmissionError, load_submission_method, validate_submission
from harness.submissions.scaffold import scaffold
from tests.methods.f2_scripted import FakeEvaluate, ScriptedLLM, kernel, task_context
from tests.support.cli import invoke

REPO = Path(__file__).resolve().parents[2]
MODELNEW = "import torch\nclass ModelNew(torch.nn.Module):\n    # RUNTIME=5.0\n    pass\n"


def write(folder: Path, toml: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.toml").write_text(toml)
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def fields(folder: Path, **kw) -> set[str]:
    _, problems = validate_submission(folder, **kw)
    assert all(p.fix for p in problems), "every problem carries a fix"
    return {p.field for p in problems}


def test_scaffolded_method_submission_validates_once_its_placeholders_are_filled(tmp_path):
    folder = scaffold("my-idea", tmp_path)
    spec, problems = validate_submission(folder)
    assert [p.field for p in problems] == ["submission.authors", "submission.description"]
    assert all("placeholder" in p.message for p in problems)
    toml = folder / "submission.toml"
    toml.write_text(toml.read_text().replace('"Your Name"', '"Ada Lovelace"')
                    .replace("One or two sentences: what this method does differently.", "Plans, then codes."))
    spec, problems = validate_submission(folder)
    assert problems == [] and spec.kind == "method" and spec.entry == "plugin:MyIdeaMethod"
    other = scaffold("my-method", tmp_path)  # CONTRIBUTING.md's name: its class, not MyMethodMethod
    assert 'entry = "plugin:MyMethod"' in (other / "submission.toml").read_text()
    assert "class MyMethod" in (other / "plugin.py").read_text()


def test_example_submission_validates_clean():
    spec, problems = validate_submission(REPO / "submissions" / "plan-then-code")
    assert problems == [], [str(p) for p in problems]
    assert spec.options == {"plan_steps": 4}


def test_every_broken_field_is_reported_at_once(tmp_path):
    folder = write(tmp_path / "good-name", """
[submission]
name = "Bad Name"
authors = []
paper = "arxiv 2510.03760"
code = 42
descripton = "typo"

[method]
entry = "plugin"

[llm]
models = []

[budget]
evaluations = 0
tokens = -5

[extra]
x = 1
""")
    assert fields(folder) == {
        "submission.name", "submission.authors", "submission.description", "submission.paper",
        "submission.code", "submission.descripton", "method.entry", "llm.models", "budget.evaluations",
        "budget.tokens", "extra",
    }
    _, problems = validate_submission(folder)
    typo = next(p for p in problems if p.field == "submission.descripton")
    assert "did you mean 'description'" in typo.fix


def test_name_must_match_the_folder_and_not_shadow_a_builtin(tmp_path):
    base = '[submission]\nname = "{n}"\nauthors = ["A"]\ndescription = "d"\n[method]\nkernels = "kernels"\n' \
           '[llm]\nmodels = ["m"]\n[budget]\nevaluations = 1\n'
    folder = write(tmp_path / "other", base.format(n="mine"), {"kernels/relu.py": MODELNEW})
    _, problems = validate_submission(folder)
    assert [p.field for p in problems] == ["submission.name"] and "folder" in problems[0].message
    for builtin in ("eoh", "evoengineer"):  # a built-in and an alias
        folder = write(tmp_path / builtin, base.format(n=builtin), {"kernels/relu.py": MODELNEW})
        _, problems = validate_submission(folder)
        assert [p.field for p in problems] == ["submission.name"] and "built-in" in problems[0].message


def test_missing_tables_and_toml_syntax_errors_are_reported(tmp_path):
    assert fields(write(tmp_path / "a", "")) == {"submission", "method", "llm", "budget"}
    spec, problems = validate_submission(write(tmp_path / "b", "[submission]\nname = oops\n"))
    assert spec is None and problems[0].field == "submission.toml" and "line 2" in problems[0].message
    _, problems = validate_submission(tmp_path / "nope")
    assert "harness submit new nope" in problems[0].fix


HEAD = '[submission]\nname = "{name}"\nauthors = ["A"]\ndescription = "d"\n[llm]\nmodels = ["m"]\n' \
       '[budget]\nevaluations = 3\n'


@pytest.mark.parametrize("method_table, files, expect", [
    ('[method]\nentry = "missing:Thing"\n', {}, "module 'missing' not found"),
    ('[method]\nentry = "plugin:Thing"\n', {"plugin.py": "class Think:\n    pass\n"}, "did you mean 'Think'"),
    ('[method]\nentry = "plugin:Thing"\n', {"plugin.py": "def broken(:\n"}, "does not parse"),
    ('[method]\nentry = "plugin:Thing"\n', {"plugin.py": "raise RuntimeError('no GPU here')\nThing = 1\n"},
     "RuntimeError: no GPU here"),
    ('[method]\nentry = "plugin:Thing"\n', {"plugin.py": "class Thing:\n    name = 'x'\n"}, "no optimize()"),
    ('[method]\nentry = "plugin:Thing"\nkernels = "kernels"\n', {}, "both entry and kernels"),
    ('[method]\nvariant = "v"\n', {}, "neither entry nor kernels"),
    ('[method]\nkernels = "kernels"\n', {}, "no folder"),
    ('[method]\nkernels = "kernels"\n', {"kernels/not_an_op_xyz.py": MODELNEW}, "not an op of the suite"),
    ('[method]\nkernels = "kernels"\n', {"kernels/relu.py": "class Model:\n    pass\n"}, "defines no class ModelNew"),
    ('[method]\nkernels = "kernels"\n', {"kernels/relu.py": "class ModelNew(:\n"}, "does not parse"),
])
def test_method_entry_and_kernel_problems_name_the_problem(tmp_path, method_table, files, expect):
    folder = write(tmp_path / "sub", HEAD.format(name="sub") + method_table, files)
    _, problems = validate_submission(folder)
    assert len(problems) == 1, [str(p) for p in problems]
    assert expect in problems[0].message or expect in problems[0].fix, str(problems[0])


def test_cli_validate_prints_every_problem_with_its_fix_and_exits_1(tmp_path):
    folder = write(tmp_path / "sub", '[submission]\nname = "sub"\n[method]\nkernels = "kernels"\n')
    res = invoke("validate", str(folder), command=submit_cli)
    assert res.exit_code == 1
    for field in ("submission.authors", "submission.description", "method.kernels", "llm", "budget"):
        assert f"- {field}:" in res.output
    assert res.output.count("fix:") == 5


def test_cli_new_then_validate_through_the_real_command(tmp_path):
    env_cmd = [sys.executable, "-m", "harness", "submit"]
    out = subprocess.run([*env_cmd, "new", "fresh-idea", "--dir", str(tmp_path), "--author", "Ada",
                          "--description", "Plans first, then codes."],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    ok = subprocess.run([*env_cmd, "validate", str(tmp_path / "fresh-idea")], capture_output=True, text=True,
                        cwd=REPO, timeout=120)
    assert ok.returncode == 0 and "OK" in ok.stdout
    subprocess.run([*env_cmd, "new", "placeholder-idea", "--dir", str(tmp_path), "--author", "Ada"],
                   capture_output=True, text=True, cwd=REPO, timeout=120, check=True)
    held = subprocess.run([*env_cmd, "validate", str(tmp_path / "placeholder-idea")], capture_output=True,
                          text=True, cwd=REPO, timeout=120)
    assert held.returncode == 1 and "submission.description" in held.stderr and "placeholder" in held.stderr
    again = invoke("new", "fresh-idea", "--dir", str(tmp_path), command=submit_cli)
    assert again.exit_code != 0 and "already exists" in again.output
    bad = invoke("new", "Bad_Name", "--dir", str(tmp_path), command=submit_cli)
    assert bad.exit_code != 0 and "lowercase" in bad.output


def test_evaluation_only_entry_proposes_each_precomputed_kernel_once(tmp_path):
    folder = write(tmp_path / "precomp", HEAD.format(name="precomp") + '[method]\nkernels = "kernels"\n', {
        "kernels/relu.py": MODELNEW,
        "kernels/softmax/a.py": MODELNEW.replace("5.0", "7.0"),
        "kernels/softmax/b.py": MODELNEW.replace("5.0", "6.0"),
    })
    method = load_submission_method(folder)
    assert method.name == "precomp" and method.default_budget == 3
    ev = FakeEvaluate()
    props = list(method.optimize(task_context("softmax"), ScriptedLLM(lambda c, i: ""), ev, Budget(evaluations=3)))
    assert [p.name for p in props] == ["a", "b"] and len(ev.proposals) == 2
    assert all(p.verdict.valid and p.operator == "precomputed" for p in props)
    assert list(method.optimize(task_context("gelu"), None, ev, Budget(evaluations=3))) == []


def test_plugin_entry_loads_with_options_and_runs_on_a_scripted_llm():
    method = load_submission_method(REPO / "submissions" / "plan-then-code")
    assert method.name == "plan-then-code" and method.plan_steps == 4

    def reply(call, i):
        if call.context.purpose == "plan":
            return "1. vectorise the inner loop\n2. use 256 threads\n```python\nignored\n```"
        return kernel(10.0 - i * 0.1)

    llm = ScriptedLLM(reply)
    props = list(method.optimize(task_context(), llm, FakeEvaluate(), Budget(evaluations=3)))
    assert len(props) == 3 and [c.context.purpose for c in llm.calls] == ["plan", "code"] * 3
    code_prompt = llm.calls[1].prompt
    assert "1. vectorise the inner loop" in code_prompt and "ignored" not in code_prompt
    assert "Current best kernel" in llm.calls[2].prompt  # the 2nd plan sees the 1st valid kernel


def test_registry_resolves_a_submission_folder_by_name(monkeypatch):
    from harness.methods import registry

    monkeypatch.setenv("HARNESS_SUBMISSIONS", str(REPO / "submissions"))
    method = registry.get_method("plan-then-code")
    assert method.name == "plan-then-code" and method.plan_steps == 4
    assert registry.get_method("plan-then-code", plan_steps=2).plan_steps == 2  # harness run -o plan_steps=2
    with pytest.raises(registry.UnknownMethod, match="plan-then-code"):
        registry.get_method("plan-then-cod")


def test_a_submission_folder_path_works_from_any_folder(tmp_path, monkeypatch):
    """CONTRIBUTING.md: `--method path/to/folder` works from anywhere (no ./submissions there)."""
    from harness.methods import registry

    monkeypatch.delenv("HARNESS_SUBMISSIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(registry.UnknownMethod):
        registry.get_method("plan-then-code")
    method = registry.get_method(str(REPO / "submissions" / "plan-then-code"))
    assert method.name == "plan-then-code"


def test_invalid_folder_does_not_load(tmp_path):
    folder = write(tmp_path / "sub", '[submission]\nname = "sub"\n')
    with pytest.raises(SubmissionError, match="submission.authors"):
        load_submission_method(folder)


@pytest.mark.slow
def test_example_submission_runs_through_harness_run_with_the_offline_model(tmp_path):
    from tests.methods.f2_scripted import assert_offline_run_stored, run_offline_cli

    proc, con = run_offline_cli("plan-then-code", tmp_path / "results")
    assert_offline_run_stored(proc, con, "plan-then-code", ["relu"], 3)
    purposes = [r[0] for r in con.execute("SELECT request_json FROM llm_calls ORDER BY call_id")]
    assert len(purposes) == 6  # plan + code per trial


def test_scaffolded_kernels_entry_asks_for_its_first_kernel_file(tmp_path):
    folder = scaffold("my-kernels", tmp_path, kernels=True, author="Ada Lovelace")
    toml = folder / "submission.toml"
    toml.write_text(toml.read_text().replace("Where these kernels come from (method, model, search budget).",
                                             "Best-of-8 from gpt-4.1."))
    _, problems = validate_submission(folder)
    assert [p.field for p in problems] == ["method.kernels"] and "no .py files" in problems[0].message
    (folder / "kernels" / "relu.py").write_text(MODELNEW)
    assert validate_submission(folder)[1] == []


def test_cli_validate_json_lists_problems(tmp_path):
    import json

    folder = write(tmp_path / "sub", '[submission]\nname = "sub"\n')
    res = invoke("validate", "--json", str(folder), command=submit_cli)
    data = json.loads(res.output)
    assert res.exit_code == 1 and data["ok"] is False
    assert {"field", "message", "fix"} <= set(data["problems"][0])
