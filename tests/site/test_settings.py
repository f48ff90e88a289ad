"""A run's settings as the leaderboard reads them (harness/leaderboard/settings.py): the recorded
method_settings and llm_settings (issue 30) when present, else method_options; never the seeds;
labels name exactly the settings that differ among entries of one method and model."""

from __future__ import annotations

from harness.leaderboard.settings import distinguishing, label, run_settings
from harness.store import RunInfo


def info(config, *, variant=None, llm="m@http://127.0.0.1:9/v1", budget=None, seed=0, rules="strict"):
    return RunInfo(run_id="r", method="evoengineer", variant=variant, llm=llm, llm_offline=False,
                   budget=budget or {"evaluations": 45, "llm_calls": None, "tokens": 1000, "wall_s": None},
                   seed=seed, device="cuda", suite="smoke", config=config, git_commit=None, environment={},
                   status="finished", created_at="t", finished_at=None, rules=rules)  # fmt: skip


def settings(config, **kw):
    return run_settings(info(config, **kw), hardware="NVIDIA H100", planned_ops=("relu", "softmax"))


def test_recorded_method_and_llm_settings_are_read_flat_without_seeds():
    s = settings({
        "method_settings": {"variant": "full", "population": 5, "options": {"insights": 3},
                            "stages": {"init": 1, "mutation": 44}},
        "llm_settings": {"temperature": 0.7, "max_tokens": 4096, "top_p": None, "seed": 11},
        "eval_overrides": {"max_timing_s": 2.0}, "prompt_hashes": {"a.j2": "ff"}, "final_sessions": 3,
    }, seed=4)  # fmt: skip
    assert s["variant"] == "full" and s["population"] == 5 and s["insights"] == 3
    assert s["stages.init"] == 1 and s["stages.mutation"] == 44
    assert (s["temperature"], s["max_tokens"]) == (0.7, 4096) and "top_p" not in s
    assert "seed" not in s and 4 not in s.values() and 11 not in s.values()
    assert s["budget"] == 45 and s["budget.tokens"] == 1000 and "budget.llm_calls" not in s
    assert s["eval.max_timing_s"] == 2.0 and s["final_sessions"] == 3 and len(s["prompts"]) == 8
    assert (s["model"], s["endpoint"]) == ("m", "http://127.0.0.1:9/v1")
    assert s["ops"] == "relu,softmax" and s["hardware"] == "NVIDIA H100" and s["rules"] == "strict"


def test_older_runs_fall_back_to_their_method_options_and_variant():
    s = settings({"method_options": {"population_size": 8}}, variant="full")
    assert s["population_size"] == 8 and s["variant"] == "full" and s["final_sessions"] == 1
    assert "temperature" not in s


def test_labels_name_what_differs_and_only_that():
    a = settings({"llm_settings": {"temperature": 0.2}})
    b = settings({"llm_settings": {"temperature": 0.8}})
    c = settings({"llm_settings": {"temperature": 0.2}}, rules="partial")
    shown = distinguishing([a, b, c])
    assert shown == ["rules", "temperature"]
    labels = [label(x, shown) for x in (a, b, c)]
    assert labels == ["evoengineer · m · temperature=0.2, strict rules",
                      "evoengineer · m · temperature=0.8, strict rules",
                      "evoengineer · m · temperature=0.2, partial rules"]  # fmt: skip
    assert label(a, []) == "evoengineer · m"
    # the same op set under another task file version is named; another op set already says it
    x, y = dict(a, suite_version="v1"), dict(a, suite_version="v2")
    assert distinguishing([x, y]) == ["suite_version"]
    z = dict(a, ops="relu", suite_version="v3")
    assert distinguishing([x, z]) == ["ops"]


def test_a_label_keeps_its_variant_whole_and_a_plot_drops_it_before_cutting():
    """A newcomer saw `best-of-n (N independent samples, …) · offline` in the table and
    `best-of-n (…, …) · offline` under the plot."""
    from harness.leaderboard.plots import short_label

    s = {"method": "best-of-n", "variant": "N independent samples, N = budget", "model": "offline"}
    full = label(s, [])
    assert full == "best-of-n (N independent samples, N = budget) · offline"
    assert short_label(full) == "best-of-n · offline"  # the full label is the plot mark's tooltip
    long = "evoengineer (full) · gpt-4.1 · budget=4, temperature=0.7, max_tokens=512"
    cut = short_label(long)
    assert len(cut) == 38 and cut.startswith("evoengineer (full") and cut.endswith("max_tokens=512")
