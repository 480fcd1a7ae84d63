"""The messages a search may return, loaded once: scope and time visibility decided in ONE place.

:func:`visible_messages` is the single gate between the stores and every route: it applies the
user/assistant scope as a hard filter and, with ``as_of``, hides messages written after it.
Retention (``pipeline.policy``) is applied there too: a message whose ``expires_at`` has passed is
never visible. Everything else reads the :class:`Corpus` it returns, and every route drops a
candidate that is not in it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from staging import SourceStore

__all__ = ["Corpus", "MessageRow", "Visibility", "scope_clause", "visible_messages"]


@dataclass(frozen=True)
class Visibility:
    """Who is asking and as of when: the hard filter on every route."""

    user_scope: str
    assistant_scope: str
    as_of: str | None = None


@dataclass(frozen=True)
class MessageRow:
    id: str
    rowid: int
    conversation_id: str
    session: str
    position: int
    role: str
    author: str | None
    created_at: str | None
    text: str
    external_id: str


@dataclass
class Corpus:
    """Visible messages by id, with their order inside conversations and sessions."""

    visibility: Visibility
    rows: dict[str, MessageRow] = field(default_factory=dict)
    by_rowid: dict[int, str] = field(default_factory=dict)
    order: dict[str, list[str]] = field(default_factory=dict)  # conversation -> ids by position
    conversation_external: dict[str, str] = field(default_factory=dict)
    exclusive: bool = False  # every stored message is visible (no per-row scope check needed)

    def neighbours(self, message_id: str, width: int) -> list[tuple[str, int]]:
        """Messages up to ``width`` places before/after in the same session: (id, offset)."""
        row = self.rows[message_id]
        ids = self.order[row.conversation_id]
        index = _index_of(ids, self.rows, row.position)
        found = []
        for offset in range(-width, width + 1):
            j = index + offset
            if offset == 0 or not 0 <= j < len(ids):
                continue
            other = self.rows[ids[j]]
            if other.session == row.session:
                found.append((other.id, offset))
        return found

    def speakers(self) -> dict[str, set[str]]:
        """Author name (case-folded) -> conversations where it speaks."""
        names: dict[str, set[str]] = defaultdict(set)
        for row in self.rows.values():
            if row.author:
                names[row.author.casefold()].add(row.conversation_id)
        return names

    def external_ids(self, conversations: set[str]) -> dict[str, str]:
        """Conversation id -> the export's own conversation id (e.g. a LoCoMo sample_id)."""
        return {c: self.conversation_external[c] for c in conversations
                if c in self.conversation_external}

    def rowid_range(self, conversations: Iterable[str]) -> tuple[int, int]:
        """Lowest and highest source rowid of the visible messages of these conversations."""
        rowids = [self.rows[m].rowid for c in conversations for m in self.order.get(c, ())]
        return (min(rowids), max(rowids)) if rowids else (0, -1)

    def in_conversations(self, conversations: Iterable[str]) -> set[str]:
        wanted = set(conversations)
        return {i for i, r in self.rows.items() if r.conversation_id in wanted}


def _index_of(ids: list[str], rows: dict[str, MessageRow], position: int) -> int:
    low, high = 0, len(ids)
    while low < high:
        mid = (low + high) // 2
        if rows[ids[mid]].position < position:
            low = mid + 1
        else:
            high = mid
    return low


def _session(conversation_id: str, metadata: str) -> str:
    """A conversation's session: the importer's ``session`` number if any, else the whole one."""
    try:
        value = json.loads(metadata or "{}").get("session")
    except (ValueError, AttributeError):
        value = None
    return conversation_id if value is None else f"{conversation_id}#{value}"


# The retention half of pipeline.policy.VISIBLE_SQL, over the source db's messages table.
_NOT_EXPIRED = (
    "NOT EXISTS (SELECT 1 FROM message_policy p WHERE p.message_id = messages.id"
    " AND p.expires_at IS NOT NULL AND p.expires_at <= ?)"
)


def visible_messages(source: SourceStore, visibility: Visibility) -> Corpus:
    """The corpus a search may see: rows of this user and assistant scope, not expired by the
    retention policy (evaluated now, also under ``as_of``: expired data is gone), and <= as_of."""
    sql = (
        "SELECT rowid, id, conversation_id, position, role, author, created_at, text,"
        " external_id, metadata FROM messages WHERE user_scope = ? AND assistant_scope = ?"
        f" AND {_NOT_EXPIRED}"
    )
    params: list[str] = [visibility.user_scope, visibility.assistant_scope,
                         datetime.now(UTC).isoformat()]
    if visibility.as_of is not None:
        sql += " AND (created_at IS NULL OR created_at <= ?)"
        params.append(visibility.as_of)
    corpus = Corpus(visibility)
    order: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for rowid, mid, conv, pos, role, author, created, text, ext, meta in source.db.execute(
        sql + " ORDER BY conversation_id, position", params
    ):
        corpus.rows[mid] = MessageRow(mid, rowid, conv, _session(conv, meta), pos, role, author,
                                      created, text, ext)
        corpus.by_rowid[rowid] = mid
        order[conv].append((pos, mid))
    corpus.conversation_external = {
        cid: ext for cid, ext in source.db.execute("SELECT id, external_id FROM conversations")
        if cid in order
    }
    total = source.db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    corpus.exclusive = visibility.as_of is None and total == len(corpus.rows)
    corpus.order = {conv: [mid for _, mid in sorted(items)] for conv, items in order.items()}
    return corpus


def scope_clause(visibility: Visibility, alias: str = "") -> tuple[str, list[str]]:
    """The scope and as-of half of :func:`visible_messages`, as SQL over a messages-like table
    (a prefilter for speed: retention is enforced by the corpus, which every route consults)."""
    prefix = f"{alias}." if alias else ""
    sql = f"{prefix}user_scope = ? AND {prefix}assistant_scope = ?"
    params = [visibility.user_scope, visibility.assistant_scope]
    if visibility.as_of is not None:
        sql += f" AND ({prefix}created_at IS NULL OR {prefix}created_at <= ?)"
        params.append(visibility.as_of)
    return sql, params
