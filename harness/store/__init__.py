"""The results store: SQLite schema and migrations (schema.py, db.py), typed rows
(records.py), the store API (repo.py: ``Results``), environment fingerprint, and export."""

from harness.store.db import DB_NAME, Store, StoreError
from harness.store.records import (
    CandidateRecord,
    RunInfo,
    RunOp,
    RunSpec,
    StoredVerdict,
    sha256_text,
)
from harness.store.repo import Results, new_run_id
from harness.store.verdicts import config_key

__all__ = [
    "DB_NAME",
    "CandidateRecord",
    "Results",
    "RunInfo",
    "RunOp",
    "RunSpec",
    "Store",
    "StoreError",
    "StoredVerdict",
    "config_key",
    "new_run_id",
    "sha256_text",
]
