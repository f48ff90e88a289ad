"""Every call is recorded in the store; a recorded run replays without any server."""

from __future__ import annotations

import hashlib
import json

import pytest

from harness.llm.base import CallContext, LLMError
from harness.llm.factory import make_model
from harness.llm.replay import ReplayError

SYS = {"role": "system", "content": "you write kernels"}


def _ask(model, text, trial, **kw):
    return model.chat([SYS, {"role": "user", "content": text}],
                      context=CallContext(run_id="rec", method="best-of-n", op="relu", trial=trial,
                                          purpose="init"), **kw)


def test_every_call_is_recorded_with_its_context_and_call_id(fake_server, llm_config, store, upstream_key):
    model = make_model("fake-model", store=store, run_id="rec", config=llm_config)
    r = _ask(model, "first", 0, temperature=0.5, max_tokens=64)
    rows = store.query("SELECT * FROM llm_calls")
    assert len(rows) == 1 and r.call_id == rows[0]["call_id"]
    row = rows[0]
    assert (row["run_id"], row["method"], row["op"], row["trial"]) == ("rec", "best-of-n", "relu", 0)
    assert row["model"] == "fake-model" and row["base_url"] == fake_server.url and row["offline"] == 0
    assert (row["prompt_tokens"], row["completion_tokens"]) == (r.prompt_tokens, r.completion_tokens)
    assert row["response_text"] == "echo: first" and row["error"] is None and row["latency_s"] > 0
    req = json.loads(row["request_json"])
    assert req["context"]["purpose"] == "init" and req["temperature"] == 0.5 and req["max_tokens"] == 64
    # by hand: the request's identity is the sha256 of exactly what the method asked for, as compact sorted JSON
    want = {"messages": [SYS, {"role": "user", "content": "first"}], "temperature": 0.5, "max_tokens": 64,
            "model": None}
    blob = json.dumps(want, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert row["request_sha256"] == hashlib.sha256(blob.encode()).hexdigest()
    assert upstream_key not in row["request_json"] and upstream_key not in (row["response_json"] or "")


def test_failed_calls_are_recorded_with_their_error(fake_server, llm_config, store):
    model = make_model("fake-model", store=store, run_id="rec", config=llm_config)
    fake_server.script = ["400ctx"]
    with pytest.raises(LLMError):
        _ask(model, "too long", 1)
    row = store.query("SELECT * FROM llm_calls")[0]
    assert "context too long" in row["error"] and row["response_text"] is None


def test_replay_reproduces_identical_responses_with_no_server(fake_server, llm_config, store):
    n = [0]

    def numbered(body):
        n[0] += 1
        return f"answer {n[0]} to {body['messages'][-1]['content']}"

    fake_server.reply = numbered
    live = make_model("fake-model", store=store, run_id="rec", config=llm_config)
    asks = ["a", "b", "a", "a", "c"]  # repeated identical requests get their recorded answers in order
    recorded = [_ask(live, t, i) for i, t in enumerate(asks)]
    fake_server.server.shutdown()
    fake_server.server.server_close()

    replay = make_model("replay:rec", store=store, run_id="rerun", config=llm_config)
    again = [_ask(replay, t, i) for i, t in enumerate(asks)]
    assert [r.text for r in again] == [r.text for r in recorded]
    assert [(r.prompt_tokens, r.completion_tokens) for r in again] == [
        (r.prompt_tokens, r.completion_tokens) for r in recorded]
    assert all(r.model == "fake-model" and not r.offline for r in again)
    rerun_rows = store.query("SELECT response_text FROM llm_calls WHERE run_id = 'rerun' ORDER BY call_id")
    assert [r["response_text"] for r in rerun_rows] == [r.text for r in recorded]
    with pytest.raises(ReplayError, match="not in the recording"):
        _ask(replay, "a", 9)  # asked once more than recorded


def test_replay_of_an_unrecorded_request_is_a_clear_error(store):
    offline = make_model("offline", store=store, run_id="off", device="cpu")
    _ask(offline, "hello", 0)
    replay = make_model("replay:off", store=store)
    assert replay.offline  # a replay of an offline run stays labelled offline
    with pytest.raises(ReplayError, match="not in the recording.*Re-run with a live model"):
        _ask(replay, "something else", 0)
    with pytest.raises(ReplayError, match="temperature|not in the recording"):
        _ask(replay, "hello", 0, temperature=0.9)  # sampling settings are part of the request


def test_replay_of_an_unknown_run_names_the_fix(store):
    with pytest.raises(ReplayError, match="holds no LLM calls of run 'nope'.*harness runs list"):
        make_model("replay:nope", store=store)


def test_offline_replay_yields_identical_candidates(store):
    ref = open("reference_ops/softmax/softmax.py").read()
    live = make_model("offline:4", store=store, run_id="o1", device="cpu")
    prompts = [f"Improve (trial {i % 3})\n```python\n{ref}```" for i in range(6)]
    first = [_ask(live, p, i).text for i, p in enumerate(prompts)]
    replay = make_model("replay:o1", store=store, run_id="o2")
    assert [_ask(replay, p, i).text for i, p in enumerate(prompts)] == first
