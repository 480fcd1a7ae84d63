"""Opening SQLite files and applying append-only, named migrations."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils

from staging.errors import StoreUnavailable

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


BUSY_TIMEOUT_MS = 10_000
"""How long a statement waits for another connection's write to finish (readers never wait)."""


def open_database(path: Path | str) -> sqlite_utils.Database:
    """A sqlite-utils Database in WAL mode with foreign keys on.

    A path that cannot be a database (a directory in the way, no permission, a corrupt or
    foreign file) raises ``StoreUnavailable`` naming the file and the next step.
    """
    if str(path) != ":memory:":
        _make_parent(Path(path))
        if Path(path).is_dir():
            raise StoreUnavailable(f"{path} is a directory, not a database file",
                                   "move it out of the store (the database is created anew)")
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise _unavailable(path, exc) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        raise _unavailable(path, exc) from exc
    return sqlite_utils.Database(conn)


def _make_parent(path: Path) -> None:
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        raise StoreUnavailable(f"{parent} is a file, not a store directory",
                               "pass a directory as --store (it is created on first ingest)")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(f"cannot create the store directory {parent}: {exc.strerror}",
                               "pass a --store in a directory you can write") from exc


def _unavailable(path: Path | str, exc: sqlite3.Error) -> StoreUnavailable:
    reason = str(exc)
    if "not a database" in reason or "malformed" in reason:
        return StoreUnavailable(
            f"{path}: not a readable SQLite database ({reason})",
            "restore the file from a backup, or move it away and re-import the exports",
        )
    if "readonly" in reason or "unable to open" in reason:
        return StoreUnavailable(f"{path}: cannot open for writing ({reason})",
                                "check the store's permissions, or pass a --store you can write")
    return StoreUnavailable(f"{path}: {reason}", "check the file and its directory")


def apply_migrations(db: sqlite_utils.Database, migrations: Sequence[Migration]) -> list[str]:
    """Apply the migrations not yet recorded, in order, each in its own transaction."""
    try:
        db.execute("CREATE TABLE IF NOT EXISTS _migrations "
                   "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    except sqlite3.OperationalError as exc:
        raise _unavailable(_file_of(db), exc) from exc
    done = {row[0] for row in db.execute("SELECT name FROM _migrations").fetchall()}
    applied: list[str] = []
    for migration in migrations:
        if migration.name in done:
            continue
        try:
            with transaction(db):
                migration.apply(db)
                db.execute(
                    "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                    [migration.name, utc_now()],
                )
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc) and "disk" not in str(exc):
                raise
            raise _unavailable(_file_of(db), exc) from exc
        applied.append(migration.name)
    return applied


def _file_of(db: sqlite_utils.Database) -> str:
    row = db.conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row and row[2] else ":memory:"


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
