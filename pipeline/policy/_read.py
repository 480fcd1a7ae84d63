"""The read-side predicate as queries: which messages and concepts a reader may see.

A message is visible to a reader when its (user, assistant) scope is the reader's and it has not
expired (``VISIBLE_SQL``). A concept is visible when its scope is the reader's and, if it has
evidence, at least one evidence message is visible (a concept whose every source expired or was
forgotten is not returned). Read paths over the graph (lineage, cypher helpers) filter their
results through :class:`ReadFilter`, so a graph that still holds an expired row never shows it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["VISIBLE_SQL", "ReadFilter"]

VISIBLE_SQL = (
    "({m}.user_scope = :user_scope AND {m}.assistant_scope = :assistant_scope"
    " AND NOT EXISTS (SELECT 1 FROM {p}message_policy p WHERE p.message_id = {m}.id"
    " AND p.expires_at IS NOT NULL AND p.expires_at <= :now))"
)
"""SQL over a ``messages`` alias ``{m}`` (``.format(m="m", p="")``; ``p="src."`` when the source
db is attached as ``src``) with named params ``:user_scope``, ``:assistant_scope``, ``:now``."""


@dataclass(frozen=True)
class ReadFilter:
    source_db: Path
    staging_db: Path
    scope: tuple[str, str]
    now: datetime

    @classmethod
    def of(cls, settings: object, now: datetime | None = None) -> ReadFilter:
        return cls(settings.source_db, settings.staging_db,  # type: ignore[attr-defined]
                   (settings.user_scope, settings.assistant_scope),  # type: ignore[attr-defined]
                   now or datetime.now(UTC))

    def _params(self) -> dict[str, str]:
        return {"user_scope": self.scope[0], "assistant_scope": self.scope[1],
                "now": self.now.isoformat()}

    def _connect(self) -> sqlite3.Connection:
        for path in (self.source_db, self.staging_db):
            if not path.exists():
                from staging.errors import StoreNotFound

                raise StoreNotFound(f"no {path.name} in store {path.parent}",
                                    "run `conceptmem run PATH...` (ingest, extract, sync) first")
        conn = sqlite3.connect(f"file:{self.staging_db}?mode=ro", uri=True)
        conn.execute("ATTACH DATABASE ? AS src", [f"file:{self.source_db}?mode=ro"])
        return conn

    def _select(self, sql: str, ids: Iterable[str]) -> set[str]:
        wanted = sorted(set(ids))
        found: set[str] = set()
        conn = self._connect()
        try:
            for start in range(0, len(wanted), 400):
                chunk = wanted[start : start + 400]
                params = {**self._params(), **{f"i{n}": v for n, v in enumerate(chunk)}}
                marks = ",".join(f":i{n}" for n in range(len(chunk)))
                found.update(r[0] for r in conn.execute(sql.format(ids=marks), params))
        finally:
            conn.close()
        return found

    def messages(self, ids: Iterable[str]) -> set[str]:
        """The visible subset of message ids."""
        return self._select("SELECT m.id FROM src.messages m WHERE m.id IN ({ids}) AND "
                            + VISIBLE_SQL.format(m="m", p="src."), ids)

    def concepts(self, ids: Iterable[str]) -> set[str]:
        """The visible subset of concept ids."""
        return self._select(
            "SELECT c.id FROM concepts c WHERE c.id IN ({ids}) AND c.user_scope = :user_scope"
            " AND c.assistant_scope = :assistant_scope AND (NOT EXISTS (SELECT 1 FROM evidence"
            " e WHERE e.concept_id = c.id) OR EXISTS (SELECT 1 FROM evidence e JOIN"
            " src.messages m ON m.id = e.message_id WHERE e.concept_id = c.id AND "
            + VISIBLE_SQL.format(m="m", p="src.") + "))", ids)

    def ids(self, ids: Iterable[str]) -> set[str]:
        """Visible ids among mixed message, concept and conversation ids (by prefix)."""
        items = set(ids)
        messages = self.messages(i for i in items if i.startswith("msg_"))
        concepts = self.concepts(i for i in items if i.startswith("c_"))
        conversations = self._select(
            "SELECT c.id FROM src.conversations c WHERE c.id IN ({ids}) AND c.user_scope ="
            " :user_scope AND c.assistant_scope = :assistant_scope",
            (i for i in items if i.startswith("conv_")))
        other = {i for i in items if not i.startswith(("msg_", "c_", "conv_"))}
        return messages | concepts | conversations | other


def dependency_versions(
    source_db: Path, staging_db: Path, concept_ids: Iterable[str], message_ids: Iterable[str]
) -> dict[str, str]:
    """Which revision of each concept (``rev:N``) and message (hash of its text) a read used."""
    from ontology import stable_id

    versions: dict[str, str] = {}
    conn = sqlite3.connect(f"file:{staging_db}?mode=ro", uri=True)
    conn.execute("ATTACH DATABASE ? AS src", [f"file:{source_db}?mode=ro"])
    try:
        for cid in sorted(set(concept_ids)):
            row = conn.execute("SELECT revision_count FROM concepts WHERE id = ?", [cid]
                               ).fetchone()
            versions[cid] = f"rev:{row[0]}" if row else "rev:gone"
        for mid in sorted(set(message_ids)):
            row = conn.execute("SELECT text FROM src.messages WHERE id = ?", [mid]).fetchone()
            versions[mid] = stable_id("text", row[0]) if row else "gone"
    finally:
        conn.close()
    return versions
