"""The concept route: concepts by title/alias/description, then their evidence messages.

Concepts are found by BM25 (an in-memory porter FTS5 table) and by dense similarity of their
``title; aliases; description`` text, fused by RRF. From each hit the route follows the graph:
``MERGED_INTO`` chains to the surviving concept, ``RELATES`` to related concepts and
``BELONGS_TO`` to topic siblings (both at a discount), and ``EVIDENCE_FOR`` to the messages.
Archived concepts and expired or invalidated relations are left out unless ``as_of`` asks for
a time when they still held. Every candidate carries the exact steps of its path.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from ontology import Embedder
from pipeline.retrieval.corpus import Corpus, Visibility
from pipeline.retrieval.dense import VectorIndex, Vectors
from pipeline.retrieval.lexical import fts_query, query_words
from pipeline.retrieval.model import Candidate, PathStep, SearchRequest
from staging import StagingStore

__all__ = ["ConceptGraph", "ConceptRoute", "load_concept_graph"]

Hop = tuple[str, tuple[PathStep, ...], float]  # concept id, steps to reach it, weight


@dataclass
class ConceptGraph:
    """Visible concepts and the edges the route follows, read from staging."""

    titles: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    merged_into: dict[str, str] = field(default_factory=dict)
    relations: dict[str, list[tuple[str, str, str]]] = field(
        default_factory=lambda: defaultdict(list))
    topics: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    members: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _text(title: str, aliases: str, description: str) -> str:
    names = [a for a in json.loads(aliases or "[]") if isinstance(a, str)]
    return "; ".join([title, *names, description])


def load_concept_graph(staging: StagingStore, visibility: Visibility) -> ConceptGraph:
    """Concepts of this scope (not archived unless as_of) with evidence, links, relations."""
    conn, scope = staging.db.conn, [visibility.user_scope, visibility.assistant_scope]
    graph = ConceptGraph()
    states = "state != 'archived'" if visibility.as_of is None else "1"
    for cid, title, aliases, desc, first in conn.execute(
        "SELECT id, title, aliases, description, first_seen FROM concepts WHERE user_scope = ?"
        f" AND assistant_scope = ? AND {states}", scope):
        if visibility.as_of is None or first is None or first <= visibility.as_of:
            graph.titles[cid] = title
            graph.texts[cid] = _text(title, aliases, desc)
    for eid, cid, mid in conn.execute(
        "SELECT id, concept_id, message_id FROM evidence WHERE user_scope = ? AND"
        " assistant_scope = ? ORDER BY concept_id, confidence DESC, id", scope):
        graph.evidence[cid].append((eid, mid))
    for src, dst in conn.execute(
        "SELECT from_concept_id, to_concept_id FROM concept_links WHERE kind = 'merged_into'"
        " AND active = 1 AND user_scope = ? AND assistant_scope = ?", scope):
        graph.merged_into[src] = dst
    _load_relations(conn, scope, visibility.as_of, graph)
    for cid, tid in conn.execute(
        "SELECT concept_id, topic_id FROM topic_memberships WHERE active = 1 AND user_scope = ?"
        " AND assistant_scope = ? ORDER BY topic_id, probability DESC", scope):
        graph.topics[cid].append(tid)
        graph.members[tid].append(cid)
    return graph


def _load_relations(conn: sqlite3.Connection, scope: list[str], as_of: str | None,
                    graph: ConceptGraph) -> None:
    sql = ("SELECT id, source_concept_id, target_concept_id, relation, valid_at, invalid_at,"
           " created_at, expired_at FROM relations WHERE user_scope = ? AND assistant_scope = ?")
    for rid, src, dst, kind, valid, invalid, created, expired in conn.execute(sql, scope):
        if as_of is None:
            if invalid is not None or expired is not None:
                continue
        elif (valid and valid > as_of) or (invalid and invalid <= as_of) or (
                created and created > as_of) or (expired and expired <= as_of):
            continue
        graph.relations[src].append((rid, dst, kind))
        graph.relations[dst].append((rid, src, kind))


class ConceptRoute:
    """Query -> concepts (BM25 + dense, RRF) -> graph hops -> evidence messages."""

    name = "concepts"

    def __init__(self, corpus: Corpus, graph: ConceptGraph, embedder: Embedder,
                 encode: Callable[[str], Vectors], related_weight: float = 0.5,
                 topic_weight: float = 0.0) -> None:
        self.corpus, self.graph, self.encode = corpus, graph, encode
        self.related_weight, self.topic_weight = related_weight, topic_weight
        ids = list(graph.texts)
        self.index = VectorIndex.build(ids, [graph.texts[c] for c in ids], embedder)
        self.fts = sqlite3.connect(":memory:", check_same_thread=False)
        self.fts.execute("CREATE VIRTUAL TABLE c USING fts5(cid UNINDEXED, text,"
                         " tokenize='porter unicode61 remove_diacritics 2')")
        self.fts.executemany("INSERT INTO c VALUES (?, ?)", graph.texts.items())

    def concepts(self, text: str, limit: int, query: Vectors | None = None,
                 words: list[str] | None = None) -> list[str]:
        """Concept ids best first (RRF of BM25 and dense ranks); ``words`` for BM25."""
        scores: dict[str, float] = defaultdict(float)
        words = query_words(text) if words is None else words
        if words:
            rows = self.fts.execute("SELECT cid FROM c WHERE c MATCH ? ORDER BY rank LIMIT ?",
                                    [fts_query(words), limit]).fetchall()
            for rank, (cid,) in enumerate(rows, start=1):
                scores[cid] += 1.0 / (60 + rank)
        vec = self.encode(text) if query is None else query
        for rank, (cid, _) in enumerate(self.index.top(vec, limit), start=1):
            scores[cid] += 1.0 / (60 + rank)
        return sorted(scores, key=lambda c: (-scores[c], c))[:limit]

    def candidates(self, request: SearchRequest, limit: int, query: Vectors | None = None,
                   text: str | None = None, words: list[str] | None = None) -> list[Candidate]:
        convs = request.conversations
        out: list[Candidate] = []
        seen: set[str] = set()
        for rank, cid in enumerate(self.concepts(text or request.text, 20, query, words), start=1):
            for target, steps, weight in self._hops(cid):
                for eid, mid in self.graph.evidence.get(target, ()):
                    row = self.corpus.rows.get(mid)
                    if mid in seen or row is None or (convs and row.conversation_id not in convs):
                        continue
                    seen.add(mid)
                    path = (*steps, PathStep("EVIDENCE_FOR", eid, "evidence"))
                    out.append(Candidate(mid, weight / (60 + rank), self.name, path))
        out.sort(key=lambda c: -c.score)
        return out[:limit]

    def _hops(self, cid: str) -> list[Hop]:
        start = (PathStep("Concept", cid, self.graph.titles.get(cid, cid)),)
        target, steps = self._survivor(cid, start)
        hops: list[Hop] = [(target, steps, 1.0)]
        if self.related_weight > 0:
            for rid, other, kind in self.graph.relations.get(target, ()):
                hop = (*steps, PathStep("RELATES", rid, kind),
                       PathStep("Concept", other, self.graph.titles.get(other, other)))
                hops.append((other, hop, self.related_weight))
        if self.topic_weight > 0:
            for tid in self.graph.topics.get(target, ()):
                for other in self.graph.members[tid][:5]:
                    if other != target:
                        hop = (*steps, PathStep("BELONGS_TO", f"{target}|{tid}", "topic"),
                               PathStep("Topic", tid),
                               PathStep("Concept", other, self.graph.titles.get(other, other)))
                        hops.append((other, hop, self.topic_weight))
        return hops

    def _survivor(self, cid: str, steps: tuple[PathStep, ...]) -> tuple[str, tuple[PathStep, ...]]:
        seen = {cid}
        while cid in self.graph.merged_into:
            nxt = self.graph.merged_into[cid]
            if nxt in seen:
                break
            steps = (*steps, PathStep("MERGED_INTO", f"{cid}|{nxt}", "merged into"),
                     PathStep("Concept", nxt, self.graph.titles.get(nxt, nxt)))
            seen.add(nxt)
            cid = nxt
        return cid, steps


