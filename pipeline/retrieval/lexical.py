"""BM25 over SQLite FTS5: the source db's own index, or a porter-stemmed copy in ``search.db``.

Queries are split into words; stopwords (a short English list, chosen by measurement on dev
data: it speeds queries up and does not change recall) are dropped and the rest are OR-ed as
quoted FTS5 strings, so no user text is ever read as FTS5 syntax.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pipeline.retrieval.corpus import Corpus, Visibility, scope_clause
from pipeline.retrieval.model import Candidate, PathStep, SearchRequest

__all__ = ["STOPWORDS", "Bm25Route", "PorterIndex", "fts_query", "query_words"]

_STOP_TEXT = (
    "a an and are as at be been but by did do does for from had has have he her his how i if in"
    " into is it its me my of on or our she so than that the their them then there they this to"
    " was we were what when where which who whom why will with would you your"
)
STOPWORDS = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"\w+", re.UNICODE)


def query_words(text: str, drop: Iterable[str] = ()) -> list[str]:
    """Distinct case-folded words of a query, minus stopwords and ``drop`` (in order)."""
    dropped = {d.casefold() for d in drop}
    words = [w.casefold() for w in _WORD.findall(text)]
    return list(dict.fromkeys(w for w in words if w not in STOPWORDS and w not in dropped))


def fts_query(words: list[str]) -> str:
    """An FTS5 MATCH expression: every word quoted (quotes doubled), OR-ed."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


class PorterIndex:
    """A porter-stemmed FTS5 copy of the messages in ``<store>/search.db``, kept up to date."""

    def __init__(self, path: Path, source_db: Path) -> None:
        self.conn = sqlite3.connect(str(path), check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS porter_fts USING fts5(text, conversation_id"
            " UNINDEXED, user_scope UNINDEXED, assistant_scope UNINDEXED, created_at UNINDEXED,"
            " tokenize='porter unicode61 remove_diacritics 2')"
        )
        self.source_db = source_db

    def refresh(self) -> int:
        """Index source messages not yet indexed (by rowid); returns how many were added."""
        conn = self.conn
        conn.execute("ATTACH DATABASE ? AS src", [f"file:{self.source_db}?mode=ro"])
        try:
            done = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM porter_fts").fetchone()[0]
            with conn:
                cursor = conn.execute(
                    "INSERT INTO porter_fts(rowid, text, conversation_id, user_scope,"
                    " assistant_scope, created_at) SELECT rowid, text, conversation_id,"
                    " user_scope, assistant_scope, created_at FROM src.messages WHERE rowid > ?",
                    [done],
                )
            return max(cursor.rowcount, 0)
        finally:
            conn.execute("DETACH DATABASE src")

    def close(self) -> None:
        self.conn.close()


class Bm25Route:
    """Messages by BM25 (FTS5 ``bm25()``), inside the visible scope and conversations.

    Query words found in more than ``max_df`` of all messages (and in more than ``min_df_cut``
    messages) are left out, as are words found nowhere; if that leaves none, the rarest word
    that occurs is kept. Their BM25 weight is near zero, but scoring their long posting lists
    made queries 10-20x slower (``benchmarks/search.py``); on LoCoMo dev conversations recall
    did not drop (0.619 -> 0.629 @10).
    """

    def __init__(self, corpus: Corpus, conn: sqlite3.Connection, table: str,
                 name: str = "flat_bm25", max_df: float = 0.1, min_df_cut: int = 50) -> None:
        self.corpus = corpus
        self.conn = conn
        self.table = table  # "messages_fts" (source db, joined) or "porter_fts" (search.db)
        self.name = name
        self.max_df = max_df
        self.min_df_cut = min_df_cut
        self._df: dict[str, int] = {}
        self._total = max(len(corpus.rows), 1)

    def doc_freq(self, word: str) -> int:
        if word not in self._df:
            if len(self._df) > 100_000:
                self._df.clear()
            match = f"SELECT count(*) FROM {self.table} WHERE {self.table} MATCH ?"
            self._df[word] = int(self.conn.execute(match, [fts_query([word])]).fetchone()[0])
        return self._df[word]

    def informative(self, words: list[str]) -> list[str]:
        """``words`` without those in more than ``max_df`` of the messages (>= 1 kept)."""
        if not words:
            return words
        cut = max(self.max_df * self._total, self.min_df_cut)
        present = [w for w in words if self.doc_freq(w) > 0]
        keep = [w for w in present if self.doc_freq(w) <= cut]
        return keep or sorted(present, key=self.doc_freq)[:1]

    def candidates(self, request: SearchRequest, limit: int,
                   drop: Iterable[str] = ()) -> list[Candidate]:
        words = self.informative(query_words(request.text, drop))
        if not words:
            return []
        sql, params = self._sql(self.corpus.visibility, request.conversations)
        rows = self.conn.execute(sql, [fts_query(words), *params, limit]).fetchall()
        found = []
        for rowid, rank in rows:
            mid = self.corpus.by_rowid.get(rowid)
            if mid is not None:
                found.append(Candidate(mid, -float(rank), self.name,
                                       (PathStep("bm25", "", " ".join(words)),)))
        return found

    def _sql(self, visibility: Visibility, conversations: frozenset[str]) -> tuple[str, list[Any]]:
        params: list[Any]
        if self.table == "messages_fts":
            where, params = scope_clause(visibility, "m")
            head = ("SELECT m.rowid, bm25(messages_fts) AS r FROM messages_fts JOIN messages m"
                    " ON m.rowid = messages_fts.rowid WHERE messages_fts MATCH ?")
            column = "m.conversation_id"
        else:  # the whole store is visible: no per-row scope check (3x faster when measured)
            where, params = ("1", []) if self.corpus.exclusive else scope_clause(visibility)
            t = self.table
            head = f"SELECT rowid, bm25({t}) AS r FROM {t} WHERE {t} MATCH ?"
            column = "conversation_id"
        sql = f"{head} AND {where}"
        if conversations:
            low, high = self.corpus.rowid_range(conversations)
            sql += (f" AND rowid BETWEEN ? AND ? AND {column} IN"
                    f" ({','.join('?' * len(conversations))})")
            params = [*params, low, high, *sorted(conversations)]
        return sql + " ORDER BY r LIMIT ?", params
