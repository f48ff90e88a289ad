"""The method registry (built-ins, aliases, entry points, submission folders, did-you-mean)
and the plain baselines (one-shot, best-of-N) driven by a scripted LLM over HTTP."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.methods import registry
from harness.methods.base import Budget
from harness.methods.baselines import BestOfN, OneShot
from harness.methods.registry import UnknownMethod, get_method
from tests.methods.scripted_llm import FakeEvaluate, ScriptedServer, reply
from tests.methods.test_evoengineer import assert_i1, make_task


def test_builtins_resolve_by_name():
    for name in ("evoengineer-free", "evoengineer-insight", "evoengineer-full", "one-shot", "best-of-n"):
        assert get_method(name).name == name


def test_unknown_method_suggests_close_names():
    with pytest.raises(UnknownMethod, match="Did you mean 'evoengineer-insight'"):
        get_method("evoengineer-insigth")


def test_entry_point_methods_are_found(monkeypatch):
    class EP:
        name, value = "my-method", "tests.methods.test_registry_and_baselines:PluginMethod"

        def load(self):
            return PluginMethod

    monkeypatch.setattr(registry, "_entry_points", lambda: {"my-method": EP()})
    assert get_method("my-method", k=3).k == 3
    assert any(i.name == "my-method" and i.source == "entry_point" for i in registry.list_methods())


def test_submission_folder_goes_through_the_submission_loader(tmp_path, monkeypatch):
    sub = tmp_path / "subs" / "plugin-x"
    sub.mkdir(parents=True)
    (sub / "submission.toml").write_text('name = "plugin-x"\n')
    monkeypatch.setenv("HARNESS_SUBMISSIONS", str(tmp_path / "subs"))
    monkeypatch.setattr(registry, "SUBMISSION_LOADER", "tests.methods.test_registry_and_baselines:load_sub")
    m = get_method("plugin-x")
    assert m.name == "plugin-x" and m.path == sub


def test_methods_list_json_shows_name_variant_paper_budget():
    from harness.cli import main

    out = CliRunner().invoke(main, ["methods", "list", "--json"])
    assert out.exit_code == 0, out.output
    rows = {r["name"]: r for r in json.loads(out.output)}
    assert rows["evoengineer"]["variant"] == "full"
    assert rows["evoengineer-insight"]["default_budget"] == 45
    assert "2510.03760" in rows["evoengineer-free"]["paper"]
    assert rows["one-shot"]["default_budget"] == 1


class PluginMethod:
    name, variant, paper, default_budget = "my-method", "v", "p", 7

    def __init__(self, k=0):
        self.k = k


def load_sub(path):
    m = PluginMethod()
    m.name, m.path = path.name, path
    return m


def test_best_of_n_sends_the_same_prompt_n_times():
    ev = FakeEvaluate()
    with ScriptedServer(lambda msgs, i: reply(f"s{i}", "t", f"S{i}", 10.0 + i)) as srv:
        props = list(BestOfN().optimize(make_task(), srv.model(), ev, Budget(evaluations=4)))
        reqs = srv.requests
    assert len(props) == 4 and len(reqs) == 4
    assert all(r["messages"] == reqs[0]["messages"] for r in reqs)
    assert_i1(srv.prompts()[0])
    assert all(p.verdict is not None and p.parent_ids == [] for p in props)


def test_one_shot_makes_one_proposal_whatever_the_budget():
    ev = FakeEvaluate()
    with ScriptedServer(lambda msgs, i: reply("s", "t", "S", 10.0)) as srv:
        props = list(OneShot().optimize(make_task(), srv.model(), ev, Budget(evaluations=5)))
        assert len(srv.requests) == 1
    assert len(props) == 1 and len(ev.proposals) == 1
