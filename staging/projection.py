"""Read-only projection of the source and staging databases into graph rows.

Each function returns the rows of one node label or edge type as plain dicts with every
property of ``graph.model.SCHEMA`` and a content ``row_hash``. Sync compares those hashes with
the ones stored on the graph, so only new or changed rows are written, rows gone from SQLite
are removed, and a rebuild from the same databases yields the same graph. Timestamps are
canonicalised to UTC ISO-8601 with microseconds so they compare as text on every engine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import sqlite_utils

__all__ = [
    "Projection",
    "Row",
    "canonical_time",
    "project",
    "project_source",
    "project_staging",
    "row_hash",
]

Row = dict[str, Any]
Projection = dict[str, list[Row]]


def row_hash(row: Row) -> str:
    """Content hash of a row's values in key order (``row_hash`` itself excluded).

    ``repr`` of str/int/float/bool/None is stable across runs and platforms, and every
    projection builds its rows with the same keys in the same order (a new property
    changes the tuple's length, so every hash changes and the next sync rewrites all).
    """
    values = tuple(v for k, v in row.items() if k != "row_hash")
    return hashlib.blake2b(repr(values).encode("utf-8"), digest_size=16).hexdigest()


def with_hash(row: Row) -> Row:
    """Adds ``row_hash`` to a row built without one (the projections' case)."""
    row["row_hash"] = hashlib.blake2b(
        repr(tuple(row.values())).encode("utf-8"), digest_size=16
    ).hexdigest()
    return row


def canonical_time(value: str | None) -> str | None:
    """``2024-01-02T03:04:05.000000+00:00`` for any ISO-8601 text (naive taken as UTC)."""
    if value is None or value == "":
        return None
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).isoformat(timespec="microseconds")


def _rows(db: sqlite_utils.Database, sql: str) -> Iterator[dict[str, Any]]:
    cursor = db.conn.execute(sql)
    names = [d[0] for d in cursor.description]
    for values in cursor:
        yield dict(zip(names, values, strict=True))


def _scopes(r: dict[str, Any]) -> Row:
    return {"user_scope": r["user_scope"], "assistant_scope": r["assistant_scope"]}


def _has_table(db: sqlite_utils.Database, name: str) -> bool:
    return db[name].exists()


# -- source db ------------------------------------------------------------------------------


def _conversations(db: sqlite_utils.Database) -> list[Row]:
    return [
        with_hash({
            "id": r["id"], **_scopes(r), "source_id": r["source_id"],
            "external_id": r["external_id"], "title": r["title"],
            "created_at": canonical_time(r["created_at"]),
            "updated_at": canonical_time(r["updated_at"]),
        })
        for r in _rows(db, "SELECT * FROM conversations ORDER BY id")
    ]


def _messages(db: sqlite_utils.Database) -> list[Row]:
    sql = ("SELECT id, user_scope, assistant_scope, conversation_id, parent_id, role, author,"
           " text, created_at, position, on_current_branch, source_id FROM messages ORDER BY id")
    return [
        with_hash({
            "id": r["id"], **_scopes(r), "conversation_id": r["conversation_id"],
            "parent_id": r["parent_id"], "role": r["role"], "author": r["author"],
            "text": r["text"], "created_at": canonical_time(r["created_at"]),
            "position": int(r["position"]), "on_current_branch": bool(r["on_current_branch"]),
            "source_id": r["source_id"],
        })
        for r in _rows(db, sql)
    ]


def _has_message(db: sqlite_utils.Database) -> list[Row]:
    sql = ("SELECT conversation_id AS src, id AS dst, user_scope, assistant_scope FROM messages"
           " ORDER BY conversation_id, id")
    return [
        with_hash({"id": f"{r['src']}|{r['dst']}", "src": r["src"], "dst": r["dst"], **_scopes(r)})
        for r in _rows(db, sql)
    ]


def _next(db: sqlite_utils.Database) -> list[Row]:
    """Parent -> child, so branches stay branches."""
    sql = ("SELECT m.parent_id AS src, m.id AS dst, m.user_scope, m.assistant_scope"
           " FROM messages m JOIN messages p ON p.id = m.parent_id ORDER BY m.parent_id, m.id")
    return [
        with_hash({"id": f"{r['src']}|{r['dst']}", "src": r["src"], "dst": r["dst"], **_scopes(r)})
        for r in _rows(db, sql)
    ]


def project_source(db: sqlite_utils.Database) -> Projection:
    return {
        "Conversation": _conversations(db),
        "Message": _messages(db),
        "HAS_MESSAGE": _has_message(db),
        "NEXT": _next(db),
    }


# -- staging db -----------------------------------------------------------------------------


def _segments(db: sqlite_utils.Database) -> list[Row]:
    return [
        with_hash({
            "id": r["id"], **_scopes(r), "conversation_id": r["conversation_id"],
            "ordinal": int(r["ordinal"]), "branch": r["branch"],
            "token_estimate": int(r["token_estimate"]), "status": r["status"],
            "run_id": r["run_id"],
        })
        for r in _rows(db, "SELECT * FROM segments ORDER BY id")
    ]


def _contains_message(db: sqlite_utils.Database) -> list[Row]:
    sql = ("SELECT sm.segment_id AS src, sm.message_id AS dst, sm.position, s.user_scope,"
           " s.assistant_scope FROM segment_messages sm JOIN segments s ON s.id = sm.segment_id"
           " ORDER BY sm.segment_id, sm.message_id")
    return [
        with_hash({"id": f"{r['src']}|{r['dst']}", "src": r["src"], "dst": r["dst"],
                   **_scopes(r), "position": int(r["position"])})
        for r in _rows(db, sql)
    ]


def _revisions(db: sqlite_utils.Database) -> dict[str, list[dict[str, Any]]]:
    history: dict[str, list[dict[str, Any]]] = {}
    sql = "SELECT * FROM concept_revisions ORDER BY concept_id, revision"
    for r in _rows(db, sql):
        try:
            snapshot = json.loads(r["snapshot"])
        except (TypeError, ValueError):
            snapshot = {}
        history.setdefault(r["concept_id"], []).append({
            "revision": int(r["revision"]), "action": r["action"], "reason": r["reason"],
            "run_id": r["run_id"], "written_at": canonical_time(r["written_at"]),
            "title": snapshot.get("title"), "state": snapshot.get("state"),
        })
    return history


def _concepts(db: sqlite_utils.Database) -> list[Row]:
    history = _revisions(db)
    return [
        with_hash({
            "id": r["id"], **_scopes(r), "title": r["title"], "concept_type": r["type"],
            "description": r["description"], "state": r["state"],
            "confidence": float(r["confidence"]), "aliases": r["aliases"],
            "revision_count": int(r["revision_count"]),
            "revisions": json.dumps(history.get(r["id"], []), ensure_ascii=False,
                                    sort_keys=True),
            "first_seen": canonical_time(r["first_seen"]),
            "last_seen": canonical_time(r["last_seen"]), "merged_into": r["merged_into"],
            "created_at": canonical_time(r["created_at"]),
            "updated_at": canonical_time(r["updated_at"]), "run_id": r["run_id"],
        })
        for r in _rows(db, "SELECT * FROM concepts ORDER BY id")
    ]


def _topics(db: sqlite_utils.Database) -> list[Row]:
    """Topics and parent topics (both ``Topic`` nodes), by id."""
    sql = ("SELECT id, user_scope, assistant_scope, label, keywords, size, active, plan_id,"
           " run_id FROM topics")
    if _has_table(db, "parent_topics"):
        sql += (" UNION ALL SELECT id, user_scope, assistant_scope, label, keywords, size,"
                " active, plan_id, run_id FROM parent_topics")
    return [
        with_hash({
            "id": r["id"], **_scopes(r), "label": r["label"], "keywords": r["keywords"],
            "size": int(r["size"]), "active": bool(r["active"]), "plan_id": r["plan_id"],
            "run_id": r["run_id"],
        })
        for r in _rows(db, f"SELECT * FROM ({sql}) ORDER BY id")
    ]


def _subtopic_of(db: sqlite_utils.Database) -> list[Row]:
    """Topic -> parent topic; follows the topic's own ``active`` and plan."""
    columns = {column.name for column in db["topics"].columns}
    if "parent_id" not in columns:
        return []
    sql = ("SELECT id, parent_id, user_scope, assistant_scope, active, plan_id, run_id"
           " FROM topics WHERE parent_id IS NOT NULL ORDER BY id")
    return [
        with_hash({
            "id": f"{r['id']}|{r['parent_id']}", "src": r["id"], "dst": r["parent_id"],
            **_scopes(r), "plan_id": r["plan_id"], "active": bool(r["active"]),
            "run_id": r["run_id"],
        })
        for r in _rows(db, sql)
    ]


def _evidence_for(db: sqlite_utils.Database) -> list[Row]:
    return [
        with_hash({
            "id": r["id"], "src": r["message_id"], "dst": r["concept_id"], **_scopes(r),
            "quote": r["quote"], "span_start": int(r["start"]), "span_end": int(r["end"]),
            "confidence": float(r["confidence"]), "source_id": r["source_id"],
            "mention_id": r["mention_id"], "run_id": r["run_id"],
            "written_at": canonical_time(r["written_at"]),
        })
        for r in _rows(db, "SELECT * FROM evidence ORDER BY id")
    ]


def _belongs_to(db: sqlite_utils.Database) -> list[Row]:
    sql = "SELECT * FROM topic_memberships ORDER BY concept_id, topic_id"
    return [
        with_hash({
            "id": f"{r['concept_id']}|{r['topic_id']}", "src": r["concept_id"],
            "dst": r["topic_id"], **_scopes(r), "probability": float(r["probability"]),
            "active": bool(r["active"]), "plan_id": r["plan_id"], "run_id": r["run_id"],
        })
        for r in _rows(db, sql)
    ]


def _relates(db: sqlite_utils.Database) -> list[Row]:
    return [
        with_hash({
            "id": r["id"], "src": r["source_concept_id"], "dst": r["target_concept_id"],
            **_scopes(r), "relation": r["relation"], "confidence": float(r["confidence"]),
            "valid_at": canonical_time(r["valid_at"]),
            "invalid_at": canonical_time(r["invalid_at"]),
            "created_at": canonical_time(r["created_at"]),
            "expired_at": canonical_time(r["expired_at"]),
            "evidence_message_id": r["evidence_message_id"],
            "invalidated_by": r["invalidated_by"], "run_id": r["run_id"],
        })
        for r in _rows(db, "SELECT * FROM relations ORDER BY id")
    ]


def _links(kind: str) -> Callable[[sqlite_utils.Database], list[Row]]:
    def rows(db: sqlite_utils.Database) -> list[Row]:
        sql = ("SELECT * FROM concept_links WHERE kind = '" + kind + "'"
               " ORDER BY from_concept_id, to_concept_id")
        return [
            with_hash({
                "id": f"{r['from_concept_id']}|{r['to_concept_id']}",
                "src": r["from_concept_id"], "dst": r["to_concept_id"], **_scopes(r),
                "plan_id": r["plan_id"], "active": bool(r["active"]), "run_id": r["run_id"],
                "written_at": canonical_time(r["written_at"]),
            })
            for r in _rows(db, sql)
        ]

    return rows


_STAGING: dict[str, tuple[str, Callable[[sqlite_utils.Database], list[Row]]]] = {
    "Segment": ("segments", _segments),
    "Concept": ("concepts", _concepts),
    "Topic": ("topics", _topics),
    "CONTAINS_MESSAGE": ("segment_messages", _contains_message),
    "EVIDENCE_FOR": ("evidence", _evidence_for),
    "BELONGS_TO": ("topic_memberships", _belongs_to),
    "RELATES": ("relations", _relates),
    "MERGED_INTO": ("concept_links", _links("merged_into")),
    "SPLIT_INTO": ("concept_links", _links("split_into")),
    "SUBTOPIC_OF": ("topics", _subtopic_of),
}


def project_staging(db: sqlite_utils.Database | None) -> Projection:
    """Staging rows per kind; a missing database or table projects to no rows."""
    return {
        kind: fn(db) if db is not None and _has_table(db, table) else []
        for kind, (table, fn) in _STAGING.items()
    }


def project(
    source: sqlite_utils.Database, staging: sqlite_utils.Database | None
) -> Projection:
    """Every node label and edge type with all its rows (edges may still dangle)."""
    return {**project_source(source), **project_staging(staging)}
