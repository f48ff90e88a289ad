"""The OpenAI-compatible client against a real loopback server: retries, errors, tokens."""

from __future__ import annotations

import dataclasses
import time

import pytest

from harness.llm.base import CallContext, LLMError
from harness.llm.client import OpenAIClient, TransientError
from harness.llm.factory import make_model

CTX = CallContext(run_id="r", method="m", op="relu", trial=0)
MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


def test_success_returns_text_and_the_servers_token_counts(fake_server, llm_config):
    client = OpenAIClient("fake-model", llm_config)
    r = client.chat(MSGS, context=CTX, temperature=0.3, max_tokens=50)
    assert r.text == "echo: hello"
    assert r.model == "fake-model"
    assert r.prompt_tokens == 10 + len("be brief") + len("hello")
    assert r.completion_tokens == 7
    assert not r.offline and r.latency_s > 0
    sent = fake_server.requests[-1]["body"]
    assert sent["temperature"] == 0.3 and sent["max_tokens"] == 50 and sent["messages"] == MSGS


def test_429_is_retried_after_the_servers_retry_after(fake_server, llm_config):
    slept = []
    client = OpenAIClient("fake-model", llm_config, sleep=slept.append)
    fake_server.script = ["429:1.5", "ok"]
    r = client.chat(MSGS, context=CTX)
    assert r.text == "echo: hello" and len(fake_server.requests) == 2
    assert 1.5 <= slept[0] <= 1.6
    assert r.raw["attempts"] == 2


def test_500_is_retried_with_exponential_backoff(fake_server, llm_config):
    slept = []
    client = OpenAIClient("fake-model", llm_config, sleep=slept.append)
    fake_server.script = ["500", "500", "ok"]
    assert client.chat(MSGS, context=CTX).text == "echo: hello"
    assert len(slept) == 2 and slept[1] > slept[0] * 1.01 - 0.02  # doubled, jittered in [0.5, 1]
    assert all(0 < s <= llm_config.max_backoff_s for s in slept)


def test_persistent_5xx_gives_up_after_max_retries(fake_server, llm_config):
    client = OpenAIClient("fake-model", llm_config, sleep=lambda s: None)
    fake_server.script = ["500"] * 10
    with pytest.raises(TransientError, match="after 4 attempts"):
        client.chat(MSGS, context=CTX)
    assert len(fake_server.requests) == 4


def test_timeout_is_retried_then_succeeds(fake_server, llm_config):
    cfg = dataclasses.replace(llm_config, timeout_s=0.5)
    client = OpenAIClient("fake-model", cfg, sleep=lambda s: None)
    fake_server.script = ["timeout:8", "ok"]  # the first answer would come after 8 s
    t0 = time.monotonic()
    assert client.chat(MSGS, context=CTX).text == "echo: hello"
    assert len(fake_server.requests) == 2
    assert time.monotonic() - t0 < 6  # did not wait for the slow answer (0.5 s timeout; margin for a loaded box)


def test_malformed_response_is_retried_then_reported(fake_server, llm_config):
    client = OpenAIClient("fake-model", llm_config, sleep=lambda s: None)
    fake_server.script = ["malformed", "ok"]
    assert client.chat(MSGS, context=CTX).text == "echo: hello"
    fake_server.script = ["malformed", "nochoices", "malformed", "nochoices"]
    with pytest.raises(TransientError, match="malformed|still failing"):
        client.chat(MSGS, context=CTX)


def test_bad_key_is_a_clear_error_naming_the_variable(fake_server, llm_config, monkeypatch):
    monkeypatch.setenv(llm_config.api_key_env, "sk-wrong")
    client = OpenAIClient("fake-model", llm_config, sleep=lambda s: None)
    with pytest.raises(LLMError, match=rf"401.*\${llm_config.api_key_env}.*--llm-api-key-env"):
        client.chat(MSGS, context=CTX)
    assert len(fake_server.requests) == 1  # not retried


def test_missing_key_names_the_variable_to_set(llm_config, monkeypatch):
    monkeypatch.delenv(llm_config.api_key_env)
    with pytest.raises(LLMError, match=f"export {llm_config.api_key_env}="):
        make_model("fake-model", config=llm_config)


def test_unknown_model_is_a_clear_error(fake_server, llm_config):
    client = OpenAIClient("no-such-model", llm_config, sleep=lambda s: None)
    with pytest.raises(LLMError, match=r"404.*'no-such-model' is unknown"):
        client.chat(MSGS, context=CTX)
    assert len(fake_server.requests) == 1


def test_context_too_long_names_the_fix(fake_server, llm_config):
    client = OpenAIClient("fake-model", llm_config, sleep=lambda s: None)
    fake_server.script = ["400ctx"]
    with pytest.raises(LLMError, match="context too long.*--max-tokens"):
        client.chat(MSGS, context=CTX)


def test_concurrency_limit_bounds_calls_in_flight(fake_server, llm_config):
    import threading

    cfg = dataclasses.replace(llm_config, concurrency=2)
    client = OpenAIClient("fake-model", cfg)
    fake_server.script = ["timeout:0.3"] * 6
    in_flight, peak, lock = [0], [0], threading.Lock()
    orig = client._client.chat.completions.create

    def counting(**kw):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        try:
            return orig(**kw)
        finally:
            with lock:
                in_flight[0] -= 1

    client._client.chat.completions.create = counting
    threads = [threading.Thread(target=client.chat, args=(MSGS,), kwargs={"context": CTX}) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2 and len(fake_server.requests) == 6


def test_model_at_base_url_spec_reaches_that_endpoint(fake_server, llm_config):
    m = make_model(f"fake-model@{fake_server.url}", config=dataclasses.replace(llm_config, base_url=None))
    assert m.chat(MSGS, context=CTX).text == "echo: hello"


def test_a_dead_endpoint_is_given_up_on_within_the_documented_limit(upstream_key):
    """docs/llm.md "Outages": at the defaults, a closed port costs 6 attempts and at most 31 s of
    waiting between them; the error says so (the runner then stops the run: tests/runner/test_outage.py)."""
    from pathlib import Path

    from harness.llm.config import LLMConfig
    from tests.llm.conftest import KEY_ENV
    from tests.llm.fake_openai import FakeOpenAI

    srv = FakeOpenAI(key=upstream_key)
    port = srv.port
    srv.close()  # nothing listens there any more: every connection is refused
    slept: list[float] = []
    client = OpenAIClient("fake-model", LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", api_key_env=KEY_ENV),
                          sleep=slept.append)
    with pytest.raises(TransientError, match=r"still failing after 6 attempts \(\d+\.\d s of backoff between them\): "
                                             r"APIConnectionError"):
        client.chat(MSGS, context=CTX)
    assert len(slept) == 5 and all(2**i / 2 <= s <= 2**i for i, s in enumerate(slept)) and sum(slept) <= 31
    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text().split())
    assert "given up on after 6 attempts and **at most 31 s** of waiting between them" in doc
