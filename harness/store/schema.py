"""The results store's SQLite schema and its migrations.

One file per results directory (``<results>/harness.sqlite``). Migrations are a list of SQL
scripts; ``MIGRATIONS[i]`` takes the schema from version ``i`` to ``i + 1``. Never edit a
released migration: append a new one.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 0 -> 1: the first schema
    """
    CREATE TABLE runs (
        run_id        TEXT PRIMARY KEY,
        method        TEXT NOT NULL,
        variant       TEXT,
        llm           TEXT NOT NULL,          -- "offline", "openai:gpt-4.1", "replay:RUN"...
        llm_offline   INTEGER NOT NULL DEFAULT 0,
        budget_json   TEXT NOT NULL,          -- Budget as JSON
        seed          INTEGER NOT NULL,
        device        TEXT NOT NULL,
        suite         TEXT,                   -- suite name or "ops:a,b"
        config_json   TEXT NOT NULL DEFAULT '{}',
        git_commit    TEXT,
        environment_json TEXT NOT NULL DEFAULT '{}',  -- GPU, driver, CUDA, torch, Triton, image digest
        status        TEXT NOT NULL DEFAULT 'running', -- running | finished | failed
        created_at    TEXT NOT NULL,
        finished_at   TEXT
    );
    CREATE TABLE run_ops (
        run_id        TEXT NOT NULL REFERENCES runs(run_id),
        op            TEXT NOT NULL,
        task_sha256   TEXT NOT NULL,
        status        TEXT NOT NULL DEFAULT 'pending', -- pending | searching | finished | failed
        best_candidate_id INTEGER,
        final_verdict_id  INTEGER,
        usage_json    TEXT NOT NULL DEFAULT '{}',     -- evaluations, llm calls, tokens, seconds, cost
        error         TEXT,
        started_at    TEXT,
        finished_at   TEXT,
        PRIMARY KEY (run_id, op)
    );
    CREATE TABLE candidates (
        candidate_id  INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id        TEXT NOT NULL REFERENCES runs(run_id),
        op            TEXT NOT NULL,
        trial         INTEGER NOT NULL,        -- 0-based trial number within (run, op)
        name          TEXT,
        source        TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        thought       TEXT,                    -- the method's stated rationale / insight
        operator      TEXT,                    -- e.g. init, mutation, crossover, e1, m2
        parent_ids_json TEXT NOT NULL DEFAULT '[]',
        llm_call_ids_json TEXT NOT NULL DEFAULT '[]',
        parse_error   TEXT,                    -- reply could not be parsed: the reason
        created_at    TEXT NOT NULL,
        UNIQUE (run_id, op, trial)
    );
    CREATE TABLE verdicts (
        verdict_id    INTEGER PRIMARY KEY AUTOINCREMENT,
        candidate_id  INTEGER REFERENCES candidates(candidate_id),
        run_id        TEXT,
        op            TEXT NOT NULL,
        mode          TEXT NOT NULL,           -- feedback | final
        status        TEXT NOT NULL,
        rule          TEXT,
        runtime_us    REAL,                    -- candidate median, when valid
        speedup_eager REAL,
        speedup_compile REAL,
        verdict_json  TEXT NOT NULL,           -- the full Verdict
        created_at    TEXT NOT NULL
    );
    CREATE INDEX verdicts_by_candidate ON verdicts(candidate_id);
    CREATE INDEX verdicts_by_run_op ON verdicts(run_id, op, mode);
    CREATE TABLE llm_calls (
        call_id       INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id        TEXT,
        method        TEXT,
        op            TEXT,
        trial         INTEGER,
        model         TEXT NOT NULL,
        base_url      TEXT,
        request_json  TEXT NOT NULL,           -- messages + sampling params (never the key)
        request_sha256 TEXT NOT NULL,          -- for replay: identical requests, same answer
        response_text TEXT,
        response_json TEXT,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_s     REAL,
        error         TEXT,
        offline       INTEGER NOT NULL DEFAULT 0,
        created_at    TEXT NOT NULL
    );
    CREATE INDEX llm_calls_by_request ON llm_calls(request_sha256);
    CREATE INDEX llm_calls_by_run ON llm_calls(run_id, op);
    """,
    # 1 -> 2: verdict lookup key (skip re-judging), verdict device/host-timer flags, run error
    """
    ALTER TABLE verdicts ADD COLUMN task_sha256 TEXT;
    ALTER TABLE verdicts ADD COLUMN source_sha256 TEXT;
    ALTER TABLE verdicts ADD COLUMN config_key TEXT;
    ALTER TABLE verdicts ADD COLUMN device TEXT;
    ALTER TABLE verdicts ADD COLUMN host_timers INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX verdicts_by_key ON verdicts(task_sha256, source_sha256, mode, config_key);
    CREATE INDEX candidates_by_run_op ON candidates(run_id, op);
    ALTER TABLE runs ADD COLUMN error TEXT;
    """,
    # 2 -> 3: op metadata stored with the run's op (category, dtype, tolerances, FLOPs/bytes
    # formulas, shape profiles), so readers need not find the task file again. NULL in rows
    # written before version 3: readers fall back to the task file.
    """
    ALTER TABLE run_ops ADD COLUMN meta_json TEXT;
    """,
    # 3 -> 4: the rule set (sandbox/rules/__init__.py RULE_SETS: strict | partial) of a run, which judges
    # every candidate of it, and of each verdict. Rows written before version 4 were all judged
    # under strict (the only rule set then).
    """
    ALTER TABLE runs ADD COLUMN rules TEXT NOT NULL DEFAULT 'strict';
    ALTER TABLE verdicts ADD COLUMN rules TEXT NOT NULL DEFAULT 'strict';
    CREATE INDEX verdicts_by_rules ON verdicts(rules, op, mode);
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)
