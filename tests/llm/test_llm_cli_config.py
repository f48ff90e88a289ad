"""Configuration (TOML + flags) and `harness llm check` against a real loopback server."""

from __future__ import annotations

import json

import click
import pytest

from harness.llm.cli_options import llm_options
from harness.llm.config import ConfigError, LLMConfig, load_config
from tests.support.cli import invoke

TOML = """
[llm]
model = "fake-model"
base_url = "{url}"
api_key_env = "HARNESS_TEST_UPSTREAM_KEY"
temperature = 0.2
max_tokens = 32
timeout_s = 5
max_retries = 1
concurrency = 2

[llm.prices."fake-model"]
prompt_per_mtok = 1.5
completion_per_mtok = 6.0
"""


def test_toml_config_is_read_with_prices(tmp_path):
    p = tmp_path / "llm.toml"
    p.write_text(TOML.format(url="http://127.0.0.1:1/v1"))
    cfg = load_config(p)
    assert (cfg.model, cfg.temperature, cfg.max_tokens, cfg.concurrency) == ("fake-model", 0.2, 32, 2)
    assert cfg.price("fake-model").cost(1_000_000, 1_000_000) == pytest.approx(7.5)
    assert cfg.price("openai:fake-model") is not None


def test_a_key_written_into_the_config_is_refused(tmp_path):
    p = tmp_path / "llm.toml"
    p.write_text('[llm]\nmodel = "x"\napi_key = "sk-secret"\n')
    with pytest.raises(ConfigError, match="api_key is not allowed.*api_key_env"):
        load_config(p)


def test_unknown_fields_and_bad_values_name_the_field(tmp_path):
    p = tmp_path / "llm.toml"
    p.write_text('[llm]\nmodle = "x"\n')
    with pytest.raises(ConfigError, match="modle"):
        load_config(p)
    p.write_text('[llm]\ntemperature = 7\n')
    with pytest.raises(ConfigError, match="temperature"):
        load_config(p)


def test_flags_override_the_toml_file(tmp_path):
    p = tmp_path / "llm.toml"
    p.write_text(TOML.format(url="http://127.0.0.1:1/v1"))
    seen = {}

    @click.command()
    @llm_options
    def cmd(llm_spec: str, llm_config: LLMConfig) -> None:
        seen.update(spec=llm_spec, config=llm_config)

    r = invoke("--llm-config", str(p), "--llm", "openai:other", "--temperature", "0.9",
               "--llm-api-key-env", "MY_KEY", command=cmd)
    assert r.exit_code == 0, r.output
    assert seen["spec"] == "openai:other" and seen["config"].temperature == 0.9
    assert seen["config"].api_key_env == "MY_KEY" and seen["config"].max_tokens == 32


def test_llm_check_reports_model_latency_and_tokens(fake_server, upstream_key, tmp_path):
    p = tmp_path / "llm.toml"
    p.write_text(TOML.format(url=fake_server.url))
    r = invoke("llm", "check", "--llm-config", str(p), "--json")
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["model"] == "fake-model" and info["offline"] is False and info["latency_s"] > 0
    assert info["completion_tokens"] == 7 and info["tokens_are_estimates"] is False


def test_llm_check_offline_says_it_is_not_an_llm():
    r = invoke("llm", "check", "--llm", "offline")
    assert r.exit_code == 0 and "offline: not an LLM" in r.output and "(estimates)" in r.output


def test_llm_check_with_a_bad_key_fails_with_the_fix(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_TEST_UPSTREAM_KEY", "sk-wrong")
    p = tmp_path / "llm.toml"
    p.write_text(TOML.format(url=fake_server.url))
    r = invoke("llm", "check", "--llm-config", str(p))
    assert r.exit_code != 0 and "401" in r.output and "--llm-api-key-env" in r.output


@pytest.mark.parametrize("llm, jobs, noted", [("fake-model@http://127.0.0.1:1/v1", 8, True),
                                              ("fake-model@http://127.0.0.1:1/v1", 4, False), ("offline", 8, False)])
def test_run_notes_when_more_ops_are_in_flight_than_llm_calls(tmp_path, llm, jobs, noted):
    """With --jobs above llm.concurrency (4 by default) the ops wait for the model: the run says so and
    names the fix before anything runs (here the op does not exist, so nothing does)."""
    r = invoke("run", "--method", "one-shot", "--llm", llm, "--jobs", jobs, "--ops", "no_such_op", "--device", "cpu",
               "--results", tmp_path / "results")
    assert r.exit_code == 2, r.output
    note = f"note: --jobs {jobs} but llm.concurrency is 4: at most 4 LLM calls are in flight"
    assert (note in r.output) is noted, r.output
    if noted:
        assert "concurrency = 8 under [llm]" in r.output
