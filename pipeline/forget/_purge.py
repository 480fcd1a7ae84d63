"""Deleting what `forget` names: source rows, then every staging row derived from them.

``purge_source`` removes messages (the FTS triggers drop their index entries), their policy
rows, conversations and sources left empty, and the quarantine rows of removed sources; the
children of a removed message are re-linked to its nearest kept ancestor. ``purge_staging``
removes every segment holding a message that source.db no longer has (with its segment
membership, LLM calls, extraction and mentions), LLM calls whose request or reply holds a
deleted text, and resets the mapping-derived tables so that they can be re-derived from what
is left. ``prune_embeddings`` keeps only vectors of texts the store can still produce.
``compact`` rewrites the files so that freed pages holding deleted text are gone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import sqlite_utils

from gardener.state import concept_text
from ontology import normalize_name, text_hash
from staging import transaction

__all__ = ["DERIVED_TABLES", "compact", "prune_embeddings", "purge_source", "purge_staging"]

# Re-derived from the kept extractions by replaying the mapper (and the gardener).
DERIVED_TABLES = ("mapper_decisions", "concepts", "concept_revisions", "evidence", "relations",
                  "concept_links", "topics", "topic_memberships", "gardener_plans",
                  "gardener_studies", "parent_topics", "topic_outliers")


def _chunks(items: Sequence[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _marks(chunk: Sequence[Any]) -> str:
    return ",".join("?" * len(chunk))


def _relink(db: sqlite_utils.Database, deleted: set[str]) -> int:
    """Point each kept child of a deleted message at its nearest kept ancestor."""
    parents: dict[str, str | None] = {}
    for chunk in _chunks(sorted(deleted)):
        for mid, parent in db.execute(
            f"SELECT id, parent_id FROM messages WHERE id IN ({_marks(chunk)})", chunk
        ):
            parents[mid] = parent
    moved = 0
    for chunk in _chunks(sorted(deleted)):
        children = db.execute(
            f"SELECT id, parent_id FROM messages WHERE parent_id IN ({_marks(chunk)})", chunk
        ).fetchall()
        for child, parent in children:
            if child in deleted:
                continue
            while parent in deleted:
                parent = parents.get(parent)
            db.execute("UPDATE messages SET parent_id = ? WHERE id = ?", [parent, child])
            moved += 1
    return moved


def purge_source(db: sqlite_utils.Database, message_ids: Sequence[str]) -> dict[str, int]:
    """Delete the messages and what is left empty by it, in one transaction."""
    counts = {"messages": 0, "conversations": 0, "sources": 0, "quarantine": 0, "relinked": 0}
    with transaction(db):
        conversations, sources = set(), set()
        for chunk in _chunks(message_ids):
            for cid, sid in db.execute("SELECT conversation_id, source_id FROM messages"
                                       f" WHERE id IN ({_marks(chunk)})", chunk):
                conversations.add(cid)
                sources.add(sid)
        counts["relinked"] = _relink(db, set(message_ids))
        for chunk in _chunks(message_ids):
            counts["messages"] += db.execute(
                f"DELETE FROM messages WHERE id IN ({_marks(chunk)})", chunk).rowcount
            db.execute(f"DELETE FROM message_policy WHERE message_id IN ({_marks(chunk)})",
                       chunk)
        for cid in sorted(conversations):
            counts["conversations"] += db.execute(
                "DELETE FROM conversations WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages"
                " WHERE conversation_id = ?)", [cid, cid]).rowcount
        for sid in sorted(sources):
            sha = db.execute("SELECT sha256 FROM sources WHERE id = ?", [sid]).fetchone()
            gone = db.execute(
                "DELETE FROM sources WHERE id = ? AND NOT EXISTS (SELECT 1 FROM conversations"
                " WHERE source_id = ?)", [sid, sid]).rowcount
            counts["sources"] += gone
            if gone and sha is not None:
                counts["quarantine"] += db.execute(
                    "DELETE FROM quarantine WHERE source_sha256 = ? AND NOT EXISTS (SELECT 1"
                    " FROM sources WHERE sha256 = ?)", [sha[0], sha[0]]).rowcount
                if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'repairs'").fetchone():
                    db.execute("DELETE FROM repairs WHERE source_sha256 = ? AND NOT EXISTS"
                               " (SELECT 1 FROM sources WHERE sha256 = ?)", [sha[0], sha[0]])
    return counts


def _dead_segments(staging: sqlite_utils.Database, live: set[str],
                   changed: set[str]) -> list[str]:
    rows = staging.execute("SELECT segment_id, message_id FROM segment_messages").fetchall()
    return sorted({segment for segment, message in rows
                   if message not in live or message in changed})


def _delete_in(db: sqlite_utils.Database, table: str, column: str, ids: Sequence[str]) -> int:
    removed = 0
    for chunk in _chunks(ids):
        removed += db.execute(f"DELETE FROM {table} WHERE {column} IN ({_marks(chunk)})",
                              chunk).rowcount
    return removed


def _fragments(texts: Iterable[str], min_chars: int) -> set[str]:
    """Each deleted text as stored raw and as it appears inside JSON (both escapings)."""
    found: set[str] = set()
    for text in texts:
        text = text.strip()
        if len(text) < min_chars:
            continue
        found.add(text)
        found.add(json.dumps(text)[1:-1])
        found.add(json.dumps(text, ensure_ascii=False)[1:-1])
    return found


def _sweep_llm_calls(staging: sqlite_utils.Database, texts: Iterable[str]) -> int:
    removed = 0
    for fragment in sorted(_fragments(texts, 12)):
        removed += staging.execute(
            "DELETE FROM llm_calls WHERE instr(request, ?) > 0 OR instr(COALESCE(reply, ''), ?)"
            " > 0 OR instr(COALESCE(error_detail, ''), ?) > 0",
            [fragment, fragment, fragment]).rowcount
    return removed


def purge_staging(
    staging: sqlite_utils.Database, live_messages: set[str], deleted_texts: Iterable[str],
    changed: set[str] | None = None,
) -> dict[str, int]:
    """Remove what derives from messages not in ``live_messages`` (or whose text ``changed``,
    e.g. redacted); reset the derived tables."""
    counts: dict[str, int] = {}
    with transaction(staging):
        dead = _dead_segments(staging, live_messages, changed or set())
        extractions = sorted(
            row[0] for chunk in _chunks(dead) for row in staging.execute(
                f"SELECT id FROM extractions WHERE segment_id IN ({_marks(chunk)})", chunk))
        counts["llm_calls"] = _delete_in(staging, "llm_calls", "segment_id", dead)
        counts["mentions"] = _delete_in(staging, "mentions", "extraction_id", extractions)
        counts["extractions"] = _delete_in(staging, "extractions", "id", extractions)
        _delete_in(staging, "segment_messages", "segment_id", dead)
        counts["segments"] = _delete_in(staging, "segments", "id", dead)
        counts["llm_calls"] += _sweep_llm_calls(staging, deleted_texts)
        # topic-label calls (no segment) quote concept titles and quotes: relabelled on garden
        counts["reset.llm_label_calls"] = staging.execute(
            "DELETE FROM llm_calls WHERE segment_id IS NULL").rowcount
        for table in DERIVED_TABLES:  # counted apart: most of it is re-derived just after
            counts[f"reset.{table}"] = staging.execute(f"DELETE FROM {table}").rowcount
        staging.execute("UPDATE segments SET status = 'pending'")
    return counts


def live_text_hashes(staging: sqlite_utils.Database) -> set[str]:
    """Hashes of every text the mapper and the gardener embed from the current rows."""
    texts: set[str] = set()
    for (title,) in staging.execute("SELECT title FROM mentions"):
        texts.add(normalize_name(title))
    for row in staging.query("SELECT title, description, aliases FROM concepts"):
        aliases = json.loads(row["aliases"] or "[]")
        texts.update(normalize_name(name) for name in [row["title"], *aliases])
        texts.add(concept_text(row))
    for (quote,) in staging.execute("SELECT quote FROM evidence"):
        texts.add(quote)
    return {text_hash(t) for t in texts if t}


def prune_embeddings(staging: sqlite_utils.Database) -> int:
    """Delete cached vectors of texts the store can no longer produce."""
    keep = live_text_hashes(staging)
    stale = [h for (h,) in staging.execute("SELECT DISTINCT text_hash FROM embeddings")
             if h not in keep]
    with transaction(staging):
        return _delete_in(staging, "embeddings", "text_hash", stale)


def compact(db: sqlite_utils.Database, fts: bool = False) -> None:
    """Merge the FTS index (drops deleted tokens), VACUUM, and truncate the WAL."""
    if fts:
        db.execute("INSERT INTO messages_fts(messages_fts) VALUES('optimize')")
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
