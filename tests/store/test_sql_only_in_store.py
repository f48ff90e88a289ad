"""The store owns every SQL statement: no ``sqlite3`` import and no SQL text in any module of
``harness/``, ``sandbox/``, ``submissions/`` or ``site/`` outside ``harness/store/``.

Callers speak domain terms (``Results``, ``LLMCalls``); a statement written elsewhere is a
store method missing. The check parses each file (imports and string literals, adjacent
literals joined as Python joins them, f-string parts included) so comments and names that
merely mention a table do not count.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("harness", "sandbox", "submissions", "site")
STORE = ROOT / "harness" / "store"

# statements and clauses, upper case as SQL is written here (prose says "select", "update")
SQL = re.compile(
    r"\bSELECT\b[\s\S]*?\bFROM\b"
    r"|\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b"
    r"|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b"
    r"|\b(?:CREATE|ALTER|DROP)\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b"
    r"|\bPRAGMA\s+\w+"
    r"|\bBEGIN\s+(?:IMMEDIATE|EXCLUSIVE|DEFERRED|TRANSACTION)\b"
    r"|\bWHERE\s+\w+(?:\.\w+)?\s*(?:=|<|>|!=|\bIS\b|\bIN\b|\bLIKE\b)"
)


def _py_files() -> list[Path]:
    out = []
    for top in SCANNED:
        d = ROOT / top
        if d.is_dir():
            out += [p for p in sorted(d.rglob("*.py")) if STORE not in p.parents]
    return out


def _sql_strings(tree: ast.AST) -> list[tuple[int, str]]:
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts = [node.value]
        elif isinstance(node, ast.JoinedStr):  # f-string: its literal parts, joined
            texts = ["".join(v.value for v in node.values if isinstance(v, ast.Constant))]
        else:
            continue
        for text in texts:
            m = SQL.search(text)
            if m:
                hits.append((getattr(node, "lineno", 0), m.group(0)[:60]))
    return hits


def _sqlite_imports(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "sqlite3" for a in node.names
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlite3":
            lines.append(node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "__import__"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "sqlite3"
        ):
            lines.append(node.lineno)
    return lines


def _problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(ROOT)
    out = [f"{rel}:{n}: imports sqlite3" for n in _sqlite_imports(tree)]
    out += [f"{rel}:{n}: SQL text {s!r}" for n, s in _sql_strings(tree)]
    return out


def test_no_sqlite3_import_or_sql_text_outside_the_store():
    files = _py_files()
    assert len(files) > 50, "the scan found too few modules: is ROOT right?"
    problems = [p for f in files for p in _problems(f)]
    assert not problems, (
        "SQL belongs to harness/store/ (add a named store method and call it):\n  "
        + "\n  ".join(problems)
    )


def test_the_scan_sees_the_store_itself():
    """The check is not vacuous: the store's own modules are full of what it looks for."""
    found = [p for f in sorted(STORE.glob("*.py")) for p in _problems(f)]
    assert any("imports sqlite3" in p for p in found)
    assert sum("SQL text" in p for p in found) >= 20


@pytest.mark.parametrize(
    "snippet",
    [
        "import sqlite3",
        "import sqlite3 as sq",
        "from sqlite3 import connect",
        "q = store.query('SELECT verdict_json FROM verdicts WHERE candidate_id=?', (1,))",
        'q = ("SELECT COUNT(*) AS n FROM llm_calls "\n     "WHERE run_id = ?")',
        "c.execute('INSERT INTO llm_calls (run_id) VALUES (?)', (r,))",
        "c.execute('INSERT OR IGNORE INTO run_ops VALUES (?)', (r,))",
        "c.execute('UPDATE runs SET status=? WHERE run_id=?', a)",
        "c.execute('DELETE FROM runs')",
        "c.execute('CREATE TABLE t (a)')",
        "c.execute('PRAGMA user_version')",
        "c.execute(f'SELECT * FROM {table} WHERE run_id=?', a)",
        "where = 'WHERE op = ?'",
    ],
)
def test_the_scan_catches_sql_written_outside_the_store(snippet):
    tree = ast.parse(snippet)
    assert _sqlite_imports(tree) or _sql_strings(tree)


@pytest.mark.parametrize(
    "snippet",
    [
        '"""Each call becomes one row of ``llm_calls``; select the best kernel from the archive."""',
        "msg = 'update the harness (pip install -U kernel-harness)'",
        "msg = 'Select a GPU from the list'",
        "label = 'CREATE a new run'",
    ],
)
def test_prose_that_mentions_tables_is_not_sql(snippet):
    tree = ast.parse(snippet)
    assert not _sqlite_imports(tree) and not _sql_strings(tree)
