"""The results store: SQLite schema and migrations (schema.py, db.py), typed rows
(records.py), the store API (repo.py: ``Results``, with verdicts.py), recorded LLM calls
(llm_calls.py), environment fingerprint, and export. Every SQL statement of the harness
lives in this package."""

from harness.store.db import DB_NAME, Store, StoreError
from harness.store.llm_calls import LLMCall, LLMCalls
from harness.store.records import (
    CandidateOutcome,
    CandidateRecord,
    OpMetadata,
    RunInfo,
    RunOp,
    RunSpec,
    StoredVerdict,
    ValidKernel,
    sha256_text,
)
from harness.store.repo import Results, new_run_id
from harness.store.verdicts import config_key, session_key

__all__ = [
    "DB_NAME",
    "CandidateOutcome",
    "CandidateRecord",
    "LLMCall",
    "LLMCalls",
    "OpMetadata",
    "Results",
    "RunInfo",
    "RunOp",
    "RunSpec",
    "Store",
    "StoreError",
    "StoredVerdict",
    "ValidKernel",
    "config_key",
    "new_run_id",
    "session_key",
    "sha256_text",
]
