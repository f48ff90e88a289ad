"""The user's-scale tool (harness/bench/tools/gpu_scale.py, issue 27 goal 6): its slow LLM answers through
the real gateway over HTTP after the drawn latency with a new CUDA source each call, and its count of
judgements leaves out reused verdicts and replies that never parsed. The whole run is a GPU
measurement (docs/records); here only the parts whose mistakes would make its numbers wrong."""

from __future__ import annotations

import importlib.util
import re
import time
from pathlib import Path

from harness.llm.base import CallContext
from harness.llm.client import OpenAIClient
from harness.llm.config import LLMConfig
from harness.llm.gateway import Gateway
from harness.llm.offline import OfflineModel

TOOL = Path(__file__).resolve().parents[2] / "harness/bench/tools/gpu_scale.py"
spec = importlib.util.spec_from_file_location("gpu_scale", TOOL)
scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scale)

RELU = Path(__file__).resolve().parents[2] / "reference_ops/activation/relu.py"


def test_the_slow_model_answers_over_http_late_with_a_new_build_each_call(monkeypatch):
    monkeypatch.setenv("KH_TEST_SCALE_KEY", "hk-test")
    ref = RELU.read_text()
    slow = scale.SlowModel(OfflineModel(device="cuda", broken_rate=0.0), 0.2, 0.3, "builds")
    with Gateway(slow, token="hk-test") as gw:
        client = OpenAIClient(scale.MODEL, LLMConfig(base_url=gw.http_url, api_key_env="KH_TEST_SCALE_KEY"))
        msgs = [{"role": "user", "content": f"Write a faster kernel.\n```python\n{ref}\n```"}]
        t0 = time.monotonic()
        a = client.chat(msgs, context=CallContext(op="relu"))
        b = client.chat(msgs, context=CallContext(op="relu"))
        assert time.monotonic() - t0 >= 0.4  # two calls, each at least the low end of the latency
    src = [re.search(r'_SRC = r"""\n(.*?)"""', r.text, re.S).group(1) for r in (a, b)]
    assert src[0] != src[1] and src[0].startswith("// sample ") and src[1].startswith("// sample ")
    assert scale.mark("```python\nx = 1\n```", 7, "verdicts") == "```python\n# sample 7\nx = 1\n```"
    assert scale.mark("```python\nx = 1\n```", 7, "none") == "```python\nx = 1\n```"


def test_only_judgements_the_evaluator_ran_are_counted_and_the_best_window_is_found():
    def row(task, source, t, key="k1", status="valid"):
        v = {"durations_s": {"exclusive": 1.0}, "evidence": {}}
        return ("op", "feedback", status, f"2026-11-27T04:00:{t:02d}+00:00", v, task, source, key)

    rows = [row("relu", "a", 0), row("relu", "a", 5),  # the same source again: reused
            row("relu", "b", 10, status="incorrect"), row("softmax", "a", 20),  # another task: its own judgement
            row("relu", "c", 30, key=None),  # a reply that did not parse: never judged
            row("relu", "a", 40, key="k2")]  # other settings (another seed, a final session): judged again
    times, durations, kinds = scale.judged_times(rows)
    assert len(times) == 4 and len(durations) == 4
    assert kinds == {"feedback valid": 3, "feedback incorrect": 1, "reused": 1, "reply not parsed": 1}
    assert scale.best_window([0, 1, 2, 50, 51, 100], 10) == (3, 0)
    assert scale.best_window([0, 50, 51, 52, 100], 10)[0] == 3
    p = scale.project({"window_per_min": 60.0, "gpus": 4, "gpu_held_share": 0.5, "cpu_busy_window": 0.8})
    assert p["per_min"] == 120.0 and p["limited_by"] == "jobs doubled"
    p = scale.project({"window_per_min": 60.0, "gpus": 4, "gpu_held_share": 0.5, "cpu_busy_window": 1.0})
    assert p["limited_by"] in ("jobs doubled", "CPU bound") and p["per_min"] == 120.0
