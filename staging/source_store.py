"""The source database: raw sources, conversations and messages (the single source of truth)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from ontology import ContentPart, Conversation, Message, Source, stable_id
from staging.db import apply_migrations, open_database, utc_now
from staging.source_schema import SOURCE_MIGRATIONS

__all__ = ["ImportCounts", "QuarantinedRecord", "RepairedValue", "SourceStore"]


@dataclass(frozen=True)
class QuarantinedRecord:
    """A record rejected from an otherwise readable file, kept with its reason."""

    record: str
    reason: str
    excerpt: str


@dataclass(frozen=True)
class RepairedValue:
    """A value changed or dropped while importing a record that was kept: where and why.

    ``path`` locates the value (a JSON path in the raw record, or ``message <id>.<field>``).
    """

    record: str
    path: str
    reason: str


_KEPT = 1000  # rejected/repaired entries kept in memory; the rest are only counted


@dataclass
class ImportCounts:
    """What one import did. ``rejected``/``repaired`` hold the first 1,000 entries (every one
    is a row of ``quarantine``/``repairs``); ``rejected_count``/``repaired_count`` count all,
    so a file of a million broken records cannot fill memory."""

    sources: int = 0
    conversations: int = 0
    messages: int = 0
    messages_updated: int = 0
    quarantined: int = 0
    rejected: list[QuarantinedRecord] = field(default_factory=list)
    repaired: list[RepairedValue] = field(default_factory=list)
    rejected_count: int = 0
    repaired_count: int = 0

    def reject(self, record: QuarantinedRecord) -> None:
        self.rejected_count += 1
        if len(self.rejected) < _KEPT:
            self.rejected.append(record)

    def repair(self, value: RepairedValue) -> None:
        self.repaired_count += 1
        if len(self.repaired) < _KEPT:
            self.repaired.append(value)

    def add(self, other: ImportCounts) -> None:
        self.sources += other.sources
        self.conversations += other.conversations
        self.messages += other.messages
        self.messages_updated += other.messages_updated
        self.quarantined += other.quarantined
        self.rejected.extend(other.rejected[: max(0, _KEPT - len(self.rejected))])
        self.repaired.extend(other.repaired[: max(0, _KEPT - len(self.repaired))])
        self.rejected_count += other.rejected_count
        self.repaired_count += other.repaired_count


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


_FTS_INDEX_NEW = (
    "INSERT INTO messages_fts(rowid, text) SELECT rowid, text FROM messages WHERE rowid > ?"
)


class _Indexer:
    """Runs :data:`_FTS_INDEX_NEW` for one batch at a time on a background thread."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self, after_rowid: int) -> None:
        self.wait()
        self._thread = threading.Thread(
            target=self._run, args=(after_rowid,), name="fts-index", daemon=True
        )
        self._thread.start()

    def _run(self, after_rowid: int) -> None:
        try:
            self.conn.execute(_FTS_INDEX_NEW, [after_rowid])
        except BaseException as exc:  # re-raised by wait() in the calling thread
            self._error = exc

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def wait(self) -> None:
        """Wait for the running batch; re-raise its error."""
        self.join()
        error, self._error = self._error, None
        if error is not None:
            raise error


class SourceStore:
    """Reads and writes the source db. Writers are idempotent: ids are content-addressed."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self._indexer: _Indexer | None = None

    @classmethod
    def open(cls, path: Path | str) -> SourceStore:
        db = open_database(path)
        apply_migrations(db, SOURCE_MIGRATIONS)
        return cls(db)

    def close(self) -> None:
        self.db.conn.close()

    # -- writing (call inside staging.db.transaction) ---------------------------------------
    def add_source(self, source: Source) -> bool:
        cursor = self.db.conn.execute(
            "INSERT OR IGNORE INTO sources (id, path, sha256, format, imported_at, user_scope,"
            " assistant_scope) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [source.id, source.path, source.sha256, source.format, _iso(source.imported_at),
             source.user_scope, source.assistant_scope],
        )
        return cursor.rowcount > 0

    def add_conversation(
        self, conversation: Conversation, messages: Sequence[Message]
    ) -> ImportCounts:
        """Insert what is new; refresh the mutable fields (title, position, current branch)."""
        return self.add_conversations([(conversation, messages)])

    def add_conversations(
        self, batch: Sequence[tuple[Conversation, Sequence[Message]]]
    ) -> ImportCounts:
        """Batched :meth:`add_conversation`: a few ``executemany`` calls for many rows.

        Stored rows are immutable except the fields a newer export may change: conversation
        title/updated_at and message position/on_current_branch (refreshed only for
        conversations that were already stored).
        """
        conn = self.db.conn
        counts = ImportCounts()
        self._wait_for_index()
        existed = self._existing_conversations([c.id for c, _ in batch])
        cursor = conn.executemany(
            "INSERT OR IGNORE INTO conversations (id, source_id, external_id, title, created_at,"
            " updated_at, user_scope, assistant_scope, metadata) VALUES (?,?,?,?,?,?,?,?,?)",
            [_conversation_row(c) for c, _ in batch if c.id not in existed],
        )
        counts.conversations = max(cursor.rowcount, 0)
        old = [(c, ms) for c, ms in batch if c.id in existed]
        if old:
            counts.messages_updated = self._refresh(old)
        messages = [m for _, ms in batch for m in ms]
        if messages:
            with self._indexed_in_bulk():
                cursor = conn.executemany(
                    "INSERT OR IGNORE INTO messages (id, conversation_id, parent_id, external_id,"
                    " role, author, text, parts, created_at, position, on_current_branch,"
                    " user_scope, assistant_scope, source_id, metadata)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [_message_row(m) for m in messages],
                )
            counts.messages = max(cursor.rowcount, 0)
        return counts

    def _refresh(self, batch: Sequence[tuple[Conversation, Sequence[Message]]]) -> int:
        """Update the mutable fields of stored rows; returns how many messages changed."""
        conn = self.db.conn
        conn.executemany(
            "UPDATE conversations SET title = ?1, updated_at = ?2 WHERE id = ?3"
            " AND (title IS NOT ?1 OR updated_at IS NOT ?2)",
            [(c.title, _iso(c.updated_at), c.id) for c, _ in batch],
        )
        cursor = conn.executemany(
            "UPDATE messages SET on_current_branch = ?1, position = ?2 WHERE id = ?3"
            " AND (on_current_branch != ?1 OR position != ?2)",
            [(int(m.on_current_branch), m.position, m.id) for _, ms in batch for m in ms],
        )
        return max(cursor.rowcount, 0)

    def _existing_conversations(self, ids: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self.db.conn.execute(
                f"SELECT id FROM conversations WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            )
            found.update(row[0] for row in rows)
        return found

    @contextmanager
    def _bulk_fts(self) -> Iterator[None]:
        """Index new messages in one FTS statement instead of one trigger call per row.

        The per-row insert trigger costs ~3x the insert itself; inside the caller's
        transaction it is dropped, the new rows (rowid above the old maximum) are indexed in
        bulk, and the trigger is recreated from its stored SQL, so the schema at rest is
        unchanged and other writers keep the trigger. Outside a transaction: plain inserts.
        """
        conn = self.db.conn
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_ai'"
        ).fetchone()
        if not conn.in_transaction or row is None:
            yield
            return
        before = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM messages").fetchone()[0]
        conn.execute("DROP TRIGGER messages_ai")
        try:
            yield
            conn.execute(_FTS_INDEX_NEW, [before])
        finally:
            conn.execute(row[0])

    @contextmanager
    def bulk_import(self) -> Iterator[None]:
        """Inside a transaction: FTS-index each batch of new messages on a background thread.

        As :meth:`_bulk_fts`, but the insert trigger stays dropped until the block ends, and
        each batch's index statement runs on a thread while the caller converts its next
        batch (sqlite3 releases the GIL for the whole statement). The connection is used by
        one thread at a time: every write waits for the previous indexing to finish, and so
        does the end of the block, which re-raises an indexing error. Outside a transaction
        (or without the trigger) it does nothing special.
        """
        conn = self.db.conn
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_ai'"
        ).fetchone()
        if not conn.in_transaction or row is None or self._indexer is not None:
            yield
            return
        conn.execute("DROP TRIGGER messages_ai")
        self._indexer = _Indexer(conn)
        try:
            yield
            self._wait_for_index()
        finally:
            indexer, self._indexer = self._indexer, None
            indexer.join()  # never touch the connection while the thread uses it
            conn.execute(row[0])

    @contextmanager
    def _indexed_in_bulk(self) -> Iterator[None]:
        if self._indexer is None:
            with self._bulk_fts():
                yield
            return
        conn = self.db.conn
        before = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM messages").fetchone()[0]
        yield
        self._indexer.start(before)

    def _wait_for_index(self) -> None:
        if self._indexer is not None:
            self._indexer.wait()

    def add_quarantine(self, source: Source, record: QuarantinedRecord) -> bool:
        return self.add_quarantines(source, [record]) > 0

    def add_quarantines(self, source: Source, records: Sequence[QuarantinedRecord]) -> int:
        """Quarantine rows in one ``executemany`` (idempotent); returns how many are new."""
        if not records:
            return 0
        self._wait_for_index()
        now = utc_now()
        cursor = self.db.conn.executemany(
            "INSERT OR IGNORE INTO quarantine (id, source_path, source_sha256, record, reason,"
            " excerpt, created_at) VALUES (?,?,?,?,?,?,?)",
            [(stable_id("q", source.sha256, r.record, r.reason), source.path, source.sha256,
              r.record, r.reason, r.excerpt[:2000], now) for r in records],
        )
        return max(cursor.rowcount, 0)

    def add_repair(self, source: Source, repair: RepairedValue) -> bool:
        """Record a repaired value (idempotent: a re-import adds no row)."""
        self._wait_for_index()
        rid = stable_id("r", source.sha256, repair.record, repair.path, repair.reason)
        cursor = self.db.conn.execute(
            "INSERT OR IGNORE INTO repairs (id, source_path, source_sha256, record, path, reason,"
            " created_at) VALUES (?,?,?,?,?,?,?)",
            [rid, source.path, source.sha256, repair.record, repair.path, repair.reason,
             utc_now()],
        )
        return cursor.rowcount > 0

    # -- reading -----------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        tables = ("sources", "conversations", "messages", "quarantine", "repairs")
        return {name: self.db[name].count for name in tables}

    def sources(self) -> list[Source]:
        rows = self.db.query("SELECT * FROM sources ORDER BY imported_at, id")
        return [Source(**{**row, "imported_at": _dt(row["imported_at"])}) for row in rows]

    def conversations(self, ids: Iterable[str] | None = None) -> Iterator[Conversation]:
        sql = "SELECT * FROM conversations"
        params: list[Any] = []
        if ids is not None:
            id_list = list(ids)
            sql += f" WHERE id IN ({','.join('?' * len(id_list))})"
            params = id_list
        for row in self.db.query(sql + " ORDER BY created_at, id", params):
            yield _conversation(row)

    def messages(self, conversation_id: str | None = None) -> Iterator[Message]:
        """Messages in (conversation, position) order; one conversation if given."""
        if conversation_id is None:
            rows = self.db.query("SELECT * FROM messages ORDER BY conversation_id, position")
        else:
            rows = self.db.query(
                "SELECT * FROM messages WHERE conversation_id = ? ORDER BY position",
                [conversation_id],
            )
        for row in rows:
            yield _message(row)

    def get_messages(self, ids: Iterable[str]) -> dict[str, Message]:
        id_list = list(dict.fromkeys(ids))
        found: dict[str, Message] = {}
        for start in range(0, len(id_list), 500):
            chunk = id_list[start : start + 500]
            rows = self.db.query(
                f"SELECT * FROM messages WHERE id IN ({','.join('?' * len(chunk))})", chunk
            )
            for row in rows:
                found[row["id"]] = _message(row)
        return found

    def search(self, query: str, limit: int = 20) -> list[Message]:
        rows = self.db.query(
            "SELECT messages.* FROM messages_fts JOIN messages ON messages.rowid ="
            " messages_fts.rowid WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?",
            [query, limit],
        )
        return [_message(row) for row in rows]


_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode


def _conversation_row(c: Conversation) -> tuple[Any, ...]:
    return (
        c.id, c.source_id, c.external_id, c.title, _iso(c.created_at), _iso(c.updated_at),
        c.user_scope, c.assistant_scope, _JSON(c.metadata),
    )


def _message_row(m: Message) -> tuple[Any, ...]:
    parts = _JSON(
        [{"kind": p.kind, "text": p.text, "data": p.data} for p in m.parts]
    ) if m.parts else "[]"
    created = m.created_at  # _iso() inlined: this runs once per stored message
    return (
        m.id, m.conversation_id, m.parent_id, m.external_id, m.role, m.author, m.text, parts,
        created.isoformat() if created else None, m.position, int(m.on_current_branch),
        m.user_scope, m.assistant_scope, m.source_id, _metadata_json(m.metadata),
    )


_METADATA_CACHE: dict[tuple[tuple[str, Any], ...], str] = {}


def _metadata_json(metadata: dict[str, Any]) -> str:
    """JSON of a message's metadata; the few distinct flat dicts of an export are memoised."""
    if not metadata:
        return "{}"
    key = tuple(metadata.items())
    try:
        cached = _METADATA_CACHE.get(key)
    except TypeError:  # unhashable (nested) values
        return _JSON(metadata)
    if cached is None:
        if len(_METADATA_CACHE) > 4096:
            _METADATA_CACHE.clear()
        cached = _METADATA_CACHE[key] = _JSON(metadata)
    return cached


def _conversation(row: dict[str, Any]) -> Conversation:
    return Conversation(
        id=row["id"], source_id=row["source_id"], external_id=row["external_id"],
        title=row["title"], created_at=_dt(row["created_at"]), updated_at=_dt(row["updated_at"]),
        user_scope=row["user_scope"], assistant_scope=row["assistant_scope"],
        metadata=json.loads(row["metadata"]),
    )


def _message(row: dict[str, Any]) -> Message:
    return Message(
        id=row["id"], conversation_id=row["conversation_id"], source_id=row["source_id"],
        parent_id=row["parent_id"],
        external_id=row["external_id"], role=row["role"], author=row["author"], text=row["text"],
        parts=[ContentPart(**p) for p in json.loads(row["parts"])],
        created_at=_dt(row["created_at"]), position=row["position"],
        on_current_branch=bool(row["on_current_branch"]), user_scope=row["user_scope"],
        assistant_scope=row["assistant_scope"], metadata=json.loads(row["metadata"]),
    )
