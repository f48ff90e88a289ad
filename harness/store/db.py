"""Opening the results store: one SQLite file per results directory, migrated on open.

Writes go through ``Store.tx()`` (one transaction, ``BEGIN IMMEDIATE``) so concurrent writers
(parallel ops, several processes) serialise cleanly; WAL mode lets readers go on meanwhile.
Each thread gets its own connection. ``Store.read_only(path)`` opens an existing store
without migrating or writing it (e.g. to seed a method from another results folder).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from harness.store.schema import MIGRATIONS, SCHEMA_VERSION
from harness.usererror import UserError

DB_NAME = "harness.sqlite"
SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreError(RuntimeError, UserError):
    pass


_CHECKED: set[str] = set()  # stores this process has checked (and opened): never read with open() again


def check_sqlite_file(path: Path) -> None:
    """Refuse a file that is not a SQLite database, before SQLite touches it (it is never
    overwritten: a results store is the only copy of a run). Once per file and process: SQLite
    locks a database with POSIX record locks, which the kernel drops for the whole process when
    any descriptor of that file in it is closed. Reading the header again while this process held
    a connection dropped that connection's locks; another process closing the store then took it
    for the last one, checkpointed and deleted the WAL and its index under this process's open
    connection ("disk I/O error" at its next open: a resumed run with `runs show` or a refused
    `harness run` beside it, 2026-11-27)."""
    key = os.path.realpath(path)
    if key in _CHECKED:
        return
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except FileNotFoundError:  # SQLite makes it: this process's connection will hold it
        _CHECKED.add(key)
        return
    except OSError as e:
        raise StoreError(f"{path}: cannot read the results store ({e.strerror}); "
                         "check its permissions or pass another --results folder") from None
    if head and head != SQLITE_MAGIC:
        raise StoreError(f"{path}: not a SQLite results store (it was left untouched); move it away "
                         "or pass another --results folder")
    _CHECKED.add(key)


def utcnow() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    def __init__(self, results_dir: str | Path):
        self.dir = Path(results_dir)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{self.dir}: cannot create the results folder ({e.strerror}); "
                             "pass --results a folder you can write") from None
        self.path = self.dir / DB_NAME
        self.readonly = False
        self._local = threading.local()
        check_sqlite_file(self.path)
        try:
            self._migrate()
        except sqlite3.DatabaseError as e:  # OperationalError too: unwritable, locked, malformed
            self.close()
            raise StoreError(f"{self.path}: cannot open the results store ({e}); "
                             "pass --results a folder you can write, or move a damaged file away") from None

    @classmethod
    def read_only(cls, path: str | Path) -> Store:
        """Open an existing store for reading only: no migration, no writes, no new files.

        ``path``: a results folder (holding ``harness.sqlite``) or the ``.sqlite`` file itself.
        """
        p = Path(path)
        if p.is_dir():
            p = p / DB_NAME
        if not p.is_file():
            raise FileNotFoundError(
                f"{p}: no results store there (pass a results folder or its {DB_NAME})"
            )
        check_sqlite_file(p)
        self = cls.__new__(cls)
        self.dir, self.path, self.readonly = p.parent, p, True
        self._local = threading.local()
        return self

    # -- connections -------------------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        c = getattr(self._local, "conn", None)
        if c is None and self.readonly:
            c = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro",
                uri=True,
                timeout=60,
                isolation_level=None,
                check_same_thread=False,
            )
            c.row_factory = sqlite3.Row
            c.execute("PRAGMA busy_timeout=60000")
            self._local.conn = c
        elif c is None:
            c = sqlite3.connect(
                self.path, timeout=60, isolation_level=None, check_same_thread=False
            )
            c.row_factory = sqlite3.Row
            c.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a committed transaction survives a crash of the process (what
            # resume needs); only a power cut may lose the last commits. Much faster writes.
            c.execute("PRAGMA synchronous=NORMAL")
            c.execute("PRAGMA foreign_keys=ON")
            c.execute("PRAGMA busy_timeout=60000")
            self._local.conn = c
        return c

    @contextlib.contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        c = self.conn()
        c.execute("BEGIN IMMEDIATE")
        try:
            yield c
        except BaseException:
            c.execute("ROLLBACK")
            raise
        else:
            c.execute("COMMIT")

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self.conn().execute(sql, params).fetchall()

    def close(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None

    # -- schema --------------------------------------------------------------------------
    def schema_version(self) -> int:
        return self.conn().execute("PRAGMA user_version").fetchone()[0]

    def _migrate(self) -> None:
        c = self.conn()
        c.execute("BEGIN IMMEDIATE")
        try:
            v = c.execute("PRAGMA user_version").fetchone()[0]
            if v > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: schema version {v} is newer than this harness knows "
                    f"({SCHEMA_VERSION}); upgrade the harness (pip install -U kernel-harness)"
                )
            for i in range(v, SCHEMA_VERSION):
                for stmt in _statements(MIGRATIONS[i]):
                    c.execute(stmt)
                c.execute(f"PRAGMA user_version = {i + 1}")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        else:
            c.execute("COMMIT")


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip() and not _only_comments(s)]


def _only_comments(s: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in s.splitlines())
