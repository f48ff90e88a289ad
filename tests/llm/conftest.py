"""Fixtures of the LLM-layer tests: a real loopback OpenAI-compatible server and a store."""

from __future__ import annotations

import pytest

from harness.llm.config import LLMConfig
from harness.store.db import Store
from tests.llm.fake_openai import FakeOpenAI

KEY_ENV = "HARNESS_TEST_UPSTREAM_KEY"


@pytest.fixture
def fake_server():
    with FakeOpenAI(key="sk-test-upstream") as srv:
        yield srv


@pytest.fixture
def upstream_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-upstream")
    return "sk-test-upstream"


@pytest.fixture
def llm_config(fake_server, upstream_key) -> LLMConfig:
    return LLMConfig(model="fake-model", base_url=fake_server.url, api_key_env=KEY_ENV, timeout_s=5,
                     max_retries=3, backoff_s=0.01, max_backoff_s=2.0, concurrency=2)


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "results")
