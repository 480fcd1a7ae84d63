"""Queries both engines understand, written once: counts, ids, export and the lineage reads.

A backend subclasses ``CypherGraph`` and supplies ``_read(query, params) -> rows`` plus its own
schema and write statements. Labels and types come from ``graph.model.SCHEMA`` only (never
from user input); every value travels as a query parameter.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from graph.errors import GraphError
from graph.model import (
    SCHEMA,
    AsOfConcept,
    AsOfRelation,
    AsOfState,
    ConceptHistory,
    ConceptRef,
    EdgeSpec,
    EvidenceRow,
    NodeSpec,
    Row,
    WindowMessage,
)

__all__ = ["CypherGraph", "spec_for"]


def spec_for(kind: str) -> NodeSpec | EdgeSpec:
    """The schema entry of a label or edge type; unknown names are refused, never quoted."""
    spec = SCHEMA.nodes.get(kind) or SCHEMA.edges.get(kind)
    if spec is None:
        known = ", ".join(SCHEMA.kinds())
        raise GraphError(f"unknown graph label or edge type: {kind!r}", f"use one of: {known}")
    return spec


def _pattern(spec: NodeSpec | EdgeSpec) -> tuple[str, str]:
    """(MATCH pattern, variable) for every node of a label or edge of a type."""
    if isinstance(spec, NodeSpec):
        return f"(x:{spec.label})", "x"
    return f"(a:{spec.src_label})-[x:{spec.type}]->(b:{spec.dst_label})", "x"


class CypherGraph:
    backend: str = ""
    target: str = ""

    def _read(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        raise NotImplementedError

    # -- inventory ----------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        result: dict[str, int] = {}
        for kind in SCHEMA.kinds():
            pattern, var = _pattern(spec_for(kind))
            rows = self._read(f"MATCH {pattern} RETURN count({var}) AS c")
            result[kind] = int(rows[0]["c"]) if rows else 0
        return result

    def ids(self, kind: str) -> set[str]:
        pattern, var = _pattern(spec_for(kind))
        return {row["id"] for row in self._read(f"MATCH {pattern} RETURN {var}.id AS id")}

    def hashes(self, kind: str) -> dict[str, str]:
        pattern, var = _pattern(spec_for(kind))
        query = f"MATCH {pattern} RETURN {var}.id AS id, {var}.row_hash AS h"
        return {row["id"]: row["h"] for row in self._read(query)}

    def rows(self, kind: str) -> list[Row]:
        """Every node of a label or edge of a type with all its properties, sorted by id."""
        spec = spec_for(kind)
        pattern, var = _pattern(spec)
        columns = [f"{var}.{name} AS {name}" for name in spec.names]
        if isinstance(spec, EdgeSpec):
            columns = ["a.id AS src", "b.id AS dst", *columns]
        rows = self._read(f"MATCH {pattern} RETURN {', '.join(columns)}")
        return sorted(rows, key=lambda r: (r["id"], r.get("src"), r.get("dst")))

    def export(self) -> dict[str, list[Row]]:
        return {kind: self.rows(kind) for kind in SCHEMA.kinds()}

    # -- lineage --------------------------------------------------------------------------------
    def evidence_for_concept(self, concept_id: str) -> list[EvidenceRow]:
        rows = self._read(
            "MATCH (m:Message)-[e:EVIDENCE_FOR]->(c:Concept {id: $id}) "
            "RETURN e.id AS evidence_id, c.id AS concept_id, e.quote AS quote, "
            "e.span_start AS span_start, e.span_end AS span_end, e.confidence AS confidence, "
            "m.id AS message_id, m.conversation_id AS conversation_id, "
            "m.created_at AS created_at, m.role AS role, e.run_id AS run_id",
            {"id": concept_id},
        )
        found = [
            EvidenceRow(
                evidence_id=r["evidence_id"], concept_id=r["concept_id"], quote=r["quote"],
                start=int(r["span_start"]), end=int(r["span_end"]),
                confidence=float(r["confidence"]), message_id=r["message_id"],
                conversation_id=r["conversation_id"], created_at=r["created_at"],
                role=r["role"], run_id=r["run_id"],
            )
            for r in rows
        ]
        return sorted(found, key=lambda e: (e.created_at or "", e.message_id, e.start, e.end))

    def concepts_for_message(self, message_id: str) -> list[ConceptRef]:
        rows = self._read(
            "MATCH (m:Message {id: $id})-[e:EVIDENCE_FOR]->(c:Concept) "
            "RETURN c.id AS id, c.title AS title, c.concept_type AS concept_type, "
            "c.state AS state, e.id AS evidence_id",
            {"id": message_id},
        )
        grouped: dict[str, tuple[Row, list[str]]] = {}
        for r in rows:
            grouped.setdefault(r["id"], (r, []))[1].append(r["evidence_id"])
        return [
            ConceptRef(r["id"], r["title"], r["concept_type"], r["state"], tuple(sorted(ev)))
            for _, (r, ev) in sorted(grouped.items())
        ]

    def _neighbours(self, ids: list[str], forward: bool) -> list[str]:
        step = "(a:Message {id: x})-[:NEXT]->(b:Message)" if forward else (
            "(b:Message)-[:NEXT]->(a:Message {id: x})"
        )
        rows = self._read(f"UNWIND $ids AS x MATCH {step} RETURN DISTINCT b.id AS id", {"ids": ids})
        return sorted(r["id"] for r in rows)

    def _messages(self, ids: list[str]) -> dict[str, Row]:
        rows = self._read(
            "UNWIND $ids AS x MATCH (m:Message {id: x}) RETURN m.id AS id, "
            "m.conversation_id AS conversation_id, m.role AS role, m.created_at AS created_at, "
            "m.position AS position, m.text AS text",
            {"ids": ids},
        )
        return {r["id"]: r for r in rows}

    def window(self, message_id: str, n: int) -> list[WindowMessage]:
        offsets: dict[str, int] = {message_id: 0}
        for forward, sign in ((False, -1), (True, 1)):
            frontier = [message_id]
            for distance in range(1, max(0, int(n)) + 1):
                frontier = [m for m in self._neighbours(frontier, forward) if m not in offsets]
                offsets.update({m: sign * distance for m in frontier})
                if not frontier:
                    break
        rows = self._messages(sorted(offsets))
        if message_id not in rows:
            return []
        found = [
            WindowMessage(offsets[i], i, r["conversation_id"], r["role"], r["created_at"],
                          int(r["position"]), r["text"])
            for i, r in rows.items()
        ]
        return sorted(found, key=lambda w: (w.offset, w.position, w.message_id))

    def _linked(self, concept_id: str, edge_type: str, outgoing: bool) -> tuple[str, ...]:
        pattern = (f"(c:Concept {{id: $id}})-[:{edge_type}]->(o:Concept)" if outgoing
                   else f"(o:Concept)-[:{edge_type}]->(c:Concept {{id: $id}})")
        rows = self._read(f"MATCH {pattern} RETURN o.id AS id", {"id": concept_id})
        return tuple(sorted({r["id"] for r in rows}))

    def concept_history(self, concept_id: str) -> ConceptHistory | None:
        rows = self._read(
            "MATCH (c:Concept {id: $id}) RETURN c.title AS title, c.state AS state, "
            "c.revisions AS revisions",
            {"id": concept_id},
        )
        if not rows:
            return None
        row = rows[0]
        return ConceptHistory(
            concept_id=concept_id, title=row["title"], state=row["state"],
            revisions=tuple(json.loads(row["revisions"] or "[]")),
            merged_into=self._linked(concept_id, "MERGED_INTO", True),
            merged_from=self._linked(concept_id, "MERGED_INTO", False),
            split_into=self._linked(concept_id, "SPLIT_INTO", True),
            split_from=self._linked(concept_id, "SPLIT_INTO", False),
        )

    def as_of(self, at: str, believed_at: str) -> AsOfState:
        # World time `at`: the concept had been seen (first_seen) and the relation held
        # (valid_at <= at < invalid_at). System time `believed_at`: what the memory held then
        # (created_at <= believed_at < expired_at; the concept's latest revision by then).
        params = {"at": at, "believed": believed_at}
        concepts = []
        rows = self._read(
            "MATCH (c:Concept) WHERE c.created_at <= $believed "
            "AND (c.first_seen IS NULL OR c.first_seen <= $at) "
            "RETURN c.id AS id, c.title AS title, "
            "c.state AS state, c.revision_count AS revision_count, c.revisions AS revisions",
            params,
        )
        for r in rows:
            known = [
                v for v in json.loads(r["revisions"] or "[]") if v["written_at"] <= believed_at
            ]
            last = max(known, key=lambda v: v["revision"]) if known else None
            concepts.append(AsOfConcept(
                r["id"], last["title"] if last else r["title"],
                last["state"] if last else r["state"], last["revision"] if last else 0,
            ))
        rels = self._read(
            "MATCH (a:Concept)-[r:RELATES]->(b:Concept) WHERE r.created_at <= $believed "
            "AND (r.expired_at IS NULL OR r.expired_at > $believed) "
            "AND (r.valid_at IS NULL OR r.valid_at <= $at) "
            "AND (r.invalid_at IS NULL OR r.invalid_at > $at) "
            "RETURN r.id AS id, a.id AS src, b.id AS dst, r.relation AS relation, "
            "r.confidence AS confidence, r.valid_at AS valid_at, r.invalid_at AS invalid_at, "
            "r.created_at AS created_at, r.expired_at AS expired_at",
            params,
        )
        relations = [
            AsOfRelation(r["id"], r["src"], r["dst"], r["relation"], float(r["confidence"]),
                         r["valid_at"], r["invalid_at"], r["created_at"], r["expired_at"])
            for r in rels
        ]
        return AsOfState(
            at, believed_at, tuple(sorted(concepts, key=lambda c: c.concept_id)),
            tuple(sorted(relations, key=lambda r: r.relation_id)),
        )
