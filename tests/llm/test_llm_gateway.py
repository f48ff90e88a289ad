"""The gateway: a stock OpenAI client in another process talks to it with a run token, never
sees the upstream key; calls are recorded; the budget ends with a clear 429."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import openai
import pytest

from harness.llm.base import CallContext
from harness.llm.budget import UsageMeter
from harness.llm.client import OpenAIClient
from harness.llm.config import LLMConfig
from harness.llm.factory import make_model
from harness.llm.gateway import Gateway
from harness.methods.base import Budget

CHILD = textwrap.dedent(
    """
    import json, os, sys
    import openai
    upstream = sys.argv[1]
    env_values = list(os.environ.values())
    assert not any(upstream in v for v in env_values), "upstream key visible in the environment"
    assert "HARNESS_TEST_UPSTREAM_KEY" not in os.environ
    assert os.environ["OPENAI_API_KEY"] != upstream
    client = openai.OpenAI(max_retries=0)  # base URL and key from the environment only
    models = [m.id for m in client.models.list()]
    r = client.chat.completions.create(model=models[0], messages=[{"role": "user", "content": "hi from child"}],
                                       extra_headers={"X-Harness-Op": "relu", "X-Harness-Trial": "3"})
    print(json.dumps({"text": r.choices[0].message.content, "usage": [r.usage.prompt_tokens,
                      r.usage.completion_tokens], "models": models}))
    """
)


def _upstream(fake_server, llm_config, store, run_id="gw-run"):
    return make_model("fake-model", store=store, run_id=run_id, config=llm_config)


def test_method_process_uses_gateway_and_cannot_see_the_upstream_key(fake_server, llm_config, store, upstream_key):
    ctx = CallContext(run_id="gw-run", method="external")
    with Gateway(_upstream(fake_server, llm_config, store), context=ctx) as gw:
        assert gw.token != upstream_key
        env = gw.child_env(base={"PATH": os.environ["PATH"], "HARNESS_TEST_UPSTREAM_KEY": upstream_key,
                                 "INNOCENT": upstream_key}, secrets_to_hide=(upstream_key,))
        out = subprocess.run([sys.executable, "-c", CHILD, upstream_key], env=env, capture_output=True,
                             text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["text"] == "echo: hi from child"
    assert got["usage"] == [10 + len("hi from child"), 7]  # the upstream server's counts, passed through
    assert got["models"] == ["fake-model"]
    assert fake_server.requests[-1]["auth"] == f"Bearer {upstream_key}"  # the gateway used the real key
    row = store.query("SELECT run_id, method, op, trial, prompt_tokens, request_json FROM llm_calls")[-1]
    assert (row["run_id"], row["method"], row["op"], row["trial"]) == ("gw-run", "external", "relu", 3)
    assert upstream_key not in row["request_json"]


def test_gateway_rejects_callers_without_the_run_token(fake_server, llm_config, store):
    with Gateway(_upstream(fake_server, llm_config, store)) as gw:
        bad = openai.OpenAI(base_url=gw.url, api_key="sk-test-upstream", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            bad.chat.completions.create(model="default", messages=[{"role": "user", "content": "x"}])
    assert fake_server.requests == []


def test_budget_exhaustion_through_the_gateway_is_a_clear_429(fake_server, llm_config, store):
    meter = UsageMeter(Budget(evaluations=45, llm_calls=2))
    with Gateway(_upstream(fake_server, llm_config, store), meter=meter) as gw:
        client = openai.OpenAI(base_url=gw.url, api_key=gw.token)  # SDK retries on: must stop anyway
        for _ in range(2):
            client.chat.completions.create(model="default", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.RateLimitError) as e:
            client.chat.completions.create(model="default", messages=[{"role": "user", "content": "x"}])
    assert e.value.body["type"] == "budget_exhausted" and "LLM calls spent (2 of 2)" in e.value.body["message"]
    assert len(fake_server.requests) == 2
    assert meter.snapshot()["llm_calls"] == 2


def test_gateway_on_a_unix_socket_serves_our_client(tmp_path, fake_server, llm_config, store):
    sock = tmp_path / "gw.sock"
    with Gateway(make_model("offline", store=store, run_id="u", device="cpu"), unix_socket=sock) as gw:
        assert oct(sock.stat().st_mode & 0o777) == "0o600"
        client = OpenAIClient("offline", LLMConfig(base_url=gw.url), api_key=gw.token)
        ref = open("reference_ops/activation/relu.py").read()
        r = client.chat([{"role": "user", "content": f"```python\n{ref}```"}], context=CallContext())
    assert "class ModelNew" in r.text and r.model == "offline"
    assert store.query("SELECT offline FROM llm_calls")[0]["offline"] == 1
    assert not sock.exists()


def test_gateway_refuses_models_it_does_not_serve(fake_server, llm_config, store):
    with Gateway(_upstream(fake_server, llm_config, store)) as gw:
        client = openai.OpenAI(base_url=gw.url, api_key=gw.token, max_retries=0)
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="gpt-expensive", messages=[{"role": "user", "content": "x"}])


def test_stock_openai_client_reaches_a_unix_socket_gateway(tmp_path, store):
    from harness.llm.gateway import openai_client

    with Gateway(make_model("offline", store=store, run_id="u2", device="cpu"), unix_socket=tmp_path / "g.sock") as gw:
        env = gw.child_env(base={})
        assert "OPENAI_BASE_URL" not in env and env["HARNESS_LLM_GATEWAY"] == gw.url
        client = openai_client(env["HARNESS_LLM_GATEWAY"], env["OPENAI_API_KEY"], max_retries=0)
        r = client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "Summarize: error x"}])
    assert r.choices[0].message.content and r.model == "offline"
