"""Readers and writers the store gives callers instead of SQL: a store opened read only
(neither migrated nor written), and recorded LLM calls written and read through ``LLMCalls``
(one module for recording, replay and resume)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harness.store import LLMCalls, Results, Store
from harness.store.schema import MIGRATIONS


def _v2_store(d: Path) -> None:
    con = sqlite3.connect(d / "harness.sqlite")
    for script in MIGRATIONS[:2]:
        con.executescript(script)
    con.execute("PRAGMA user_version = 2")
    con.execute(
        "INSERT INTO runs (run_id, method, llm, budget_json, seed, device, created_at) "
        "VALUES ('old', 'm', 'offline', '{}', 0, 'cpu', 'now')"
    )
    con.commit()
    con.close()


def test_read_only_store_is_neither_migrated_nor_written(tmp_path):
    _v2_store(tmp_path)
    ro = Results.open_read_only(tmp_path / "harness.sqlite")
    assert ro.store.schema_version() == 2 and ro.get_run("old").method == "m"
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.finish_run("old")
    ro.close()
    assert Store.read_only(tmp_path).schema_version() == 2
    with pytest.raises(FileNotFoundError, match="no results store there"):
        Store.read_only(tmp_path / "elsewhere")
    assert not (tmp_path / "elsewhere").exists()


def test_recorded_llm_calls_are_written_and_read_through_one_module(tmp_path):
    calls = LLMCalls(Store(tmp_path))
    common = dict(method="m", model="mdl", base_url=None, prompt_tokens=3, completion_tokens=4,
                  latency_s=0.1)  # fmt: skip
    ok = calls.record(run_id="r", op="relu", trial=0, request={"messages": [1]}, request_sha256="a",
                      response_text="hi", response={"raw": {"id": 7}}, error=None, offline=True,
                      **common)  # fmt: skip
    bad = calls.record(run_id="r", op="relu", trial=0, request={"messages": [2]}, request_sha256="b",
                       response_text=None, response=None, error="boom", offline=True, **common)  # fmt: skip
    assert [c.call_id for c in calls.of_run("r")] == [ok, bad]
    (answered,) = calls.answered("r", "relu", 0)
    assert answered.call_id == ok and answered.request == {"messages": [1]}
    assert answered.response_raw == {"id": 7} and answered.offline
    assert calls.all_offline("r") and not calls.all_offline("nothing-recorded")
    assert calls.usage_by_op("r")["relu"]["calls"] == 2
