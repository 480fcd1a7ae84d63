"""Selectors of `conceptmem forget`: which messages a request names (reads only)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from pipeline.errors import ConceptmemError

__all__ = ["NothingSelected", "Selector", "select_messages"]


class NothingSelected(ConceptmemError):
    """A selector matched nothing in the store."""


@dataclass(frozen=True)
class Selector:
    """Exactly one of the fields is set (``between`` is a pair of ISO times)."""

    message: str | None = None
    conversation: str | None = None
    source: str | None = None
    between: tuple[str, str] | None = None
    concept: str | None = None
    user_scope: str | None = None
    expired_at: str | None = None  # retention compaction: messages expired at this time

    def kind(self) -> str:
        set_ = [name for name, value in vars(self).items() if value is not None]
        if len(set_) != 1:
            raise ConceptmemError(
                f"forget needs exactly one selector, got {len(set_)}",
                "pass one of --message, --conversation, --source, --between, --concept,"
                " --user-scope, --expired",
            )
        return set_[0]

    def describe(self) -> str:
        """Content-free: the selector kind only (its value may be user text, e.g. a path)."""
        return self.kind()


def _ids(db: sqlite_utils.Database, sql: str, params: list[Any]) -> list[str]:
    return [str(row[0]) for row in db.execute(sql, params).fetchall()]


def _by_message(db: sqlite_utils.Database, value: str) -> list[str]:
    return _ids(db, "SELECT id FROM messages WHERE id = ? OR external_id = ?", [value, value])


def _by_conversation(db: sqlite_utils.Database, value: str) -> list[str]:
    return _ids(db, "SELECT m.id FROM messages m JOIN conversations c ON c.id ="
                " m.conversation_id WHERE c.id = ? OR c.external_id = ?", [value, value])


def _by_source(db: sqlite_utils.Database, value: str) -> list[str]:
    resolved = str(Path(value).resolve()) if "!" not in value else value
    return _ids(db, "SELECT m.id FROM messages m JOIN sources s ON s.id = m.source_id"
                " WHERE s.path IN (?, ?) OR s.id = ? OR s.sha256 = ?",
                [value, resolved, value, value])


def _utc(value: str) -> datetime:
    when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # naive = UTC


def _by_between(db: sqlite_utils.Database, value: tuple[str, str]) -> list[str]:
    try:
        start, end = (_utc(v) for v in value)
    except ValueError as exc:
        raise ConceptmemError(
            f"--between {value[0]} {value[1]}: {exc}",
            "give two ISO-8601 times, e.g. 2024-01-01 2024-02-01T00:00Z") from exc
    rows = db.execute("SELECT id, created_at FROM messages WHERE created_at IS NOT NULL")
    return [str(mid) for mid, created in rows.fetchall() if start <= _utc(created) < end]


def _by_concept(db: sqlite_utils.Database, staging: sqlite_utils.Database | None,
                value: str) -> list[str]:
    if staging is None:
        return []
    ids = _ids(staging, "SELECT DISTINCT message_id FROM evidence WHERE concept_id IN"
               " (SELECT ? UNION SELECT from_concept_id FROM concept_links WHERE"
               " to_concept_id = ?)", [value, value])
    return [i for i in ids if _ids(db, "SELECT id FROM messages WHERE id = ?", [i])]


def select_messages(
    source: sqlite_utils.Database, staging: sqlite_utils.Database | None, selector: Selector
) -> list[str]:
    """Store ids of the messages ``selector`` names, sorted."""
    kind = selector.kind()
    if kind == "message":
        ids = _by_message(source, str(selector.message))
    elif kind == "conversation":
        ids = _by_conversation(source, str(selector.conversation))
    elif kind == "source":
        ids = _by_source(source, str(selector.source))
    elif kind == "between":
        assert selector.between is not None
        ids = _by_between(source, selector.between)
    elif kind == "concept":
        ids = _by_concept(source, staging, str(selector.concept))
    elif kind == "user_scope":
        ids = _ids(source, "SELECT id FROM messages WHERE user_scope = ?", [selector.user_scope])
    else:
        ids = _ids(source, "SELECT message_id FROM message_policy WHERE expires_at IS NOT NULL"
                   " AND expires_at <= ?", [selector.expired_at])
    return sorted(set(ids))
