"""Greps a store's files (and Neo4j) for texts that a `forget` deleted."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def deleted_fragments(before: Path, conversation_external_id: str,
                      after: Path | None) -> set[str]:
    """24-char windows of the conversation's texts (from the store ``before``) that occur in no
    text the store ``after`` still holds: what must be gone everywhere."""
    old = sqlite3.connect(before / "source.db")
    try:
        (cid,) = old.execute("SELECT id FROM conversations WHERE external_id = ?",
                             [conversation_external_id]).fetchone()
        texts = [r[0] for r in old.execute("SELECT text FROM messages WHERE conversation_id = ?",
                                           [cid])]
        texts += [r[0] for r in old.execute("SELECT title FROM conversations WHERE id = ?",
                                            [cid]) if r[0]]
    finally:
        old.close()
    kept = ""
    if after is not None:  # None: every window of the conversation
        new = sqlite3.connect(after / "source.db")
        try:
            kept = "\n".join([r[0] for r in new.execute("SELECT text FROM messages")]
                             + [r[0] or "" for r in new.execute("SELECT title FROM"
                                                                " conversations")])
        finally:
            new.close()
    fragments: set[str] = set()
    for text in texts:
        text = text.strip()
        for i in range(0, max(1, len(text) - 24), 8):
            piece = text[i : i + 24]
            if len(piece.strip()) >= 16 and piece not in kept:
                fragments.add(piece)
    return fragments


def file_residues(store: Path, fragments: Iterable[str]) -> dict[str, list[str]]:
    """Fragments found in any file under ``store`` (UTF-8 and UTF-16), by file."""
    found: dict[str, list[str]] = {}
    pieces = list(fragments)
    for path in sorted(store.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        for piece in pieces:
            if piece.encode() in data or piece.encode("utf-16-le") in data:
                found.setdefault(path.name, []).append(piece)
    return found


def neo4j_residues(graph: Any, fragments: Iterable[str]) -> list[str]:
    """Fragments found in any string property of any node or relationship of a Neo4j graph."""
    rows = graph.run_cypher(
        "MATCH (n) UNWIND [k IN keys(n) | n[k]] AS v WITH v WHERE v IS :: STRING RETURN v"
        " UNION ALL MATCH ()-[r]->() UNWIND [k IN keys(r) | r[k]] AS v WITH v"
        " WHERE v IS :: STRING RETURN v")
    blob = "\n".join(str(row["v"]) for row in rows)
    return [piece for piece in fragments if piece in blob]
