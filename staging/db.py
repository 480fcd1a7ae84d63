"""Opening SQLite files and applying append-only, named migrations."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils

__all__ = [
    "Migration",
    "apply_migrations",
    "execute_script",
    "open_database",
    "transaction",
    "utc_now",
]


@dataclass(frozen=True)
class Migration:
    """A named step; once released, a migration is never edited, only followed by another."""

    name: str
    apply: Callable[[sqlite_utils.Database], None]


def utc_now() -> str:
    return datetime.now(UTC).isoformat()


def open_database(path: Path | str) -> sqlite_utils.Database:
    """A sqlite-utils Database in WAL mode with foreign keys on."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
    return sqlite_utils.Database(conn)


def apply_migrations(db: sqlite_utils.Database, migrations: Sequence[Migration]) -> list[str]:
    """Apply the migrations not yet recorded, in order, each in its own transaction."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in db.execute("SELECT name FROM _migrations").fetchall()}
    applied: list[str] = []
    for migration in migrations:
        if migration.name in done:
            continue
        with transaction(db):
            migration.apply(db)
            db.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                [migration.name, utc_now()],
            )
        applied.append(migration.name)
    return applied


@contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception. Nested calls join the outer."""
    conn = db.conn
    if conn.in_transaction:
        yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def execute_script(db: sqlite_utils.Database, script: str) -> None:
    """Run several statements inside the current transaction (``executescript`` would commit)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            if statement and statement != ";":
                db.conn.execute(statement)
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement at end of script: {buffer.strip()[:80]}")
