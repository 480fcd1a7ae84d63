"""Concepts, their evidence, revisions and relations in staging; extraction audit rows.

Reads return ``ontology.ConceptHypothesis`` objects. Writers are idempotent where the row is
content-addressed (evidence, relations, extractions, mentions, decisions) and are meant to be
called inside ``staging.db.transaction`` so one segment's work commits or vanishes together.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ontology import ConceptHypothesis, ConceptRelation, EvidenceSpan, stable_id
from staging.db import utc_now
from staging.staging_store import Provenance, StagingStore

__all__ = [
    "ConceptRepo",
    "ConceptRow",
    "DecisionRow",
    "EvidenceRow",
    "MentionRow",
    "RelationRow",
    "evidence_id",
]


def evidence_id(concept_id: str, message_id: str, start: int, end: int) -> str:
    return stable_id("ev", concept_id, message_id, start, end)


@dataclass
class ConceptRow:
    """The mutable current state of a concept (the ``concepts`` table)."""

    id: str
    title: str
    type: str
    description: str
    state: str
    confidence: float
    aliases: list[str] = field(default_factory=list)
    revision_count: int = 0
    first_seen: str | None = None
    last_seen: str | None = None
    merged_into: str | None = None


@dataclass(frozen=True)
class EvidenceRow:
    concept_id: str
    message_id: str
    source_id: str
    quote: str
    start: int
    end: int
    confidence: float
    mention_id: str | None

    @property
    def id(self) -> str:
        return evidence_id(self.concept_id, self.message_id, self.start, self.end)


@dataclass(frozen=True)
class MentionRow:
    id: str
    extraction_id: str
    ordinal: int
    title: str
    type: str
    description: str
    quote: str
    message_id: str
    start: int | None
    end: int | None
    verified: bool
    reject_reason: str | None
    relations: list[dict[str, Any]]


@dataclass(frozen=True)
class DecisionRow:
    mention_id: str
    action: str
    concept_id: str | None
    scores: dict[str, Any]
    reason: str
    source_message_ids: list[str]

    @property
    def id(self) -> str:
        return stable_id("md", self.mention_id)


@dataclass(frozen=True)
class RelationRow:
    source_concept_id: str
    target_concept_id: str
    relation: str
    confidence: float
    valid_at: str | None
    evidence_message_id: str | None

    @property
    def id(self) -> str:
        return stable_id("rel", self.source_concept_id, self.target_concept_id, self.relation)


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _concept_row(row: dict[str, Any]) -> ConceptRow:
    return ConceptRow(
        id=row["id"], title=row["title"], type=row["type"], description=row["description"],
        state=row["state"], confidence=row["confidence"], aliases=json.loads(row["aliases"]),
        revision_count=row["revision_count"], first_seen=row["first_seen"],
        last_seen=row["last_seen"], merged_into=row["merged_into"],
    )


class ConceptRepo:
    """Queries over the concept tables of one staging store."""

    def __init__(self, staging: StagingStore) -> None:
        self.staging = staging
        self.db = staging.db

    # -- reading -----------------------------------------------------------------------------
    def rows(
        self, states: Sequence[str] = ("active", "weak"), scope: tuple[str, str] | None = None
    ) -> list[ConceptRow]:
        """Concept rows in the given states, of one (user_scope, assistant_scope) if given."""
        where = f"state IN ({','.join('?' * len(states))})"
        params: list[str] = list(states)
        if scope is not None:
            where += " AND user_scope = ? AND assistant_scope = ?"
            params.extend(scope)
        query = f"SELECT * FROM concepts WHERE {where} ORDER BY rowid"
        return [_concept_row(row) for row in self.db.query(query, params)]

    def row(self, concept_id: str) -> ConceptRow | None:
        found = list(self.db.query("SELECT * FROM concepts WHERE id = ?", [concept_id]))
        return _concept_row(found[0]) if found else None

    def load_hypotheses(
        self, states: Sequence[str] = ("active", "weak")
    ) -> list[ConceptHypothesis]:
        rows = self.rows(states)
        ids = [row.id for row in rows]
        evidence = self._evidence_by_concept(ids)
        relations = self._relations_by_concept(ids)
        return [self._hypothesis(row, evidence[row.id], relations[row.id]) for row in rows]

    def get(self, concept_id: str) -> ConceptHypothesis | None:
        row = self.row(concept_id)
        if row is None:
            return None
        evidence = self._evidence_by_concept([concept_id])[concept_id]
        relations = self._relations_by_concept([concept_id])[concept_id]
        return self._hypothesis(row, evidence, relations)

    def evidence_for(self, concept_id: str) -> list[EvidenceSpan]:
        return self._evidence_by_concept([concept_id])[concept_id]

    def has_evidence(self, evidence_id: str) -> bool:
        found = self.db.execute("SELECT 1 FROM evidence WHERE id = ?", [evidence_id]).fetchone()
        return found is not None

    def _evidence_by_concept(self, ids: Iterable[str]) -> dict[str, list[EvidenceSpan]]:
        grouped: dict[str, list[EvidenceSpan]] = defaultdict(list)
        for chunk in _chunks(list(ids)):
            query = (
                "SELECT * FROM evidence WHERE concept_id IN"
                f" ({','.join('?' * len(chunk))}) ORDER BY rowid"
            )
            for row in self.db.query(query, chunk):
                grouped[row["concept_id"]].append(
                    EvidenceSpan(
                        source_id=row["source_id"], message_id=row["message_id"],
                        text=row["quote"], confidence=row["confidence"],
                        start=row["start"], end=row["end"],
                    )
                )
        return grouped

    def _relations_by_concept(self, ids: Iterable[str]) -> dict[str, list[ConceptRelation]]:
        grouped: dict[str, list[ConceptRelation]] = defaultdict(list)
        for chunk in _chunks(list(ids)):
            query = (
                "SELECT * FROM relations WHERE expired_at IS NULL AND invalid_at IS NULL"
                f" AND source_concept_id IN ({','.join('?' * len(chunk))}) ORDER BY rowid"
            )
            for row in self.db.query(query, chunk):
                grouped[row["source_concept_id"]].append(
                    ConceptRelation(
                        target_id=row["target_concept_id"], relation=row["relation"],
                        confidence=row["confidence"],
                    )
                )
        return grouped

    @staticmethod
    def _hypothesis(
        row: ConceptRow, evidence: list[EvidenceSpan], relations: list[ConceptRelation]
    ) -> ConceptHypothesis:
        return ConceptHypothesis.model_validate(
            {
                "concept_id": row.id, "title": row.title, "type": row.type,
                "description": row.description, "state": row.state,
                "confidence": row.confidence, "aliases": list(row.aliases),
                "evidence_spans": evidence, "relations": relations,
                "revision_count": row.revision_count, "first_seen": _dt(row.first_seen),
                "last_seen": _dt(row.last_seen),
            }
        )

    # -- writing concepts --------------------------------------------------------------------
    def save_concept(self, row: ConceptRow, prov: Provenance) -> None:
        """Insert or update the concept's current state (created_at kept on update)."""
        now = utc_now()
        values = {
            "id": row.id, "title": row.title, "type": row.type, "description": row.description,
            "state": row.state, "confidence": row.confidence,
            "aliases": json.dumps(row.aliases, ensure_ascii=False),
            "revision_count": row.revision_count, "first_seen": row.first_seen,
            "last_seen": row.last_seen, "merged_into": row.merged_into,
            "created_at": now, "updated_at": now, **prov.columns(),
        }
        columns = list(values)
        updates = ", ".join(
            f"{name} = excluded.{name}" for name in columns if name not in ("id", "created_at")
        )
        self.db.execute(
            f"INSERT INTO concepts ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
            f" ON CONFLICT(id) DO UPDATE SET {updates}",
            list(values.values()),
        )

    def record_revision(
        self, concept_id: str, action: str, reason: str, prov: Provenance
    ) -> int:
        """Append a snapshot of the concept as it is now; returns the revision number."""
        snapshot = self.get(concept_id)
        if snapshot is None:
            raise KeyError(concept_id)
        last = self.db.execute(
            "SELECT COALESCE(MAX(revision), -1) FROM concept_revisions WHERE concept_id = ?",
            [concept_id],
        ).fetchone()[0]
        revision = int(last) + 1
        self.db.execute(
            "INSERT INTO concept_revisions (concept_id, revision, action, snapshot, reason,"
            " run_id, user_scope, assistant_scope, writer, written_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)",
            [concept_id, revision, action, snapshot.model_dump_json(), reason,
             *prov.columns().values()],
        )
        return revision

    def add_evidence(self, evidence: EvidenceRow, prov: Provenance) -> bool:
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO evidence (id, concept_id, message_id, source_id, quote, start,"
            ' "end", confidence, mention_id, run_id, user_scope, assistant_scope, writer,'
            " written_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [evidence.id, evidence.concept_id, evidence.message_id, evidence.source_id,
             evidence.quote, evidence.start, evidence.end, evidence.confidence,
             evidence.mention_id, *prov.columns().values()],
        )
        return cursor.rowcount > 0

    def add_relation(self, relation: RelationRow, prov: Provenance) -> bool:
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO relations (id, source_concept_id, target_concept_id, relation,"
            " confidence, valid_at, invalid_at, created_at, expired_at, evidence_message_id,"
            " invalidated_by, run_id, user_scope, assistant_scope, writer, written_at)"
            " VALUES (?,?,?,?,?,?,NULL,?,NULL,?,NULL,?,?,?,?,?)",
            [relation.id, relation.source_concept_id, relation.target_concept_id,
             relation.relation, relation.confidence, relation.valid_at, utc_now(),
             relation.evidence_message_id, *prov.columns().values()],
        )
        return cursor.rowcount > 0

    # -- writing the extraction audit trail --------------------------------------------------
    def add_extraction(
        self, extraction_id: str, segment_id: str, extractor: str, llm_call_id: str | None,
        schema_hash: str, payload: str, source_message_ids: list[str], prov: Provenance,
    ) -> bool:
        cursor = self.db.execute(
            "INSERT OR REPLACE INTO extractions (id, segment_id, extractor, llm_call_id,"
            " schema_hash, payload, source_message_ids, run_id, user_scope, assistant_scope,"
            " writer, written_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [extraction_id, segment_id, extractor, llm_call_id, schema_hash, payload,
             json.dumps(source_message_ids), *prov.columns().values()],
        )
        return cursor.rowcount > 0

    def add_mentions(self, mentions: Sequence[MentionRow], prov: Provenance) -> None:
        self.db.conn.executemany(
            "INSERT OR REPLACE INTO mentions (id, extraction_id, ordinal, title, type,"
            ' description, quote, message_id, start, "end", verified, reject_reason, relations,'
            " run_id, user_scope, assistant_scope, writer, written_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (m.id, m.extraction_id, m.ordinal, m.title, m.type, m.description, m.quote,
                 m.message_id, m.start, m.end, int(m.verified), m.reject_reason,
                 json.dumps(m.relations, ensure_ascii=False), *prov.columns().values())
                for m in mentions
            ],
        )

    def add_decision(self, decision: DecisionRow, prov: Provenance) -> bool:
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO mapper_decisions (id, mention_id, action, concept_id, scores,"
            " reason, source_message_ids, run_id, user_scope, assistant_scope, writer,"
            " written_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [decision.id, decision.mention_id, decision.action, decision.concept_id,
             json.dumps(decision.scores, sort_keys=True), decision.reason,
             json.dumps(decision.source_message_ids), *prov.columns().values()],
        )
        return cursor.rowcount > 0


def _chunks(items: list[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
